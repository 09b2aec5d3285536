"""The HumanDriver's rules, with the sending and the queue as plain callables (no game): each press is a
step, a held key sends the next only when none waits, key-up cancels what waits, and X's auto-repeat
(release and press pairs with one server timestamp) continues a hold even when Qt does not flag it."""

from __future__ import annotations

from PySide6.QtCore import Qt

from studio.human_control import HUMAN_STEP_S, RELEASE_GRACE_MS, HumanDriver

W = Qt.Key.Key_W


class Queue:
    """A game's step queue as the driver sees it: sent steps wait until `start()` takes one."""

    def __init__(self) -> None:
        self.sent: list[float] = []
        self.waiting = 0
        self.cancelled = 0

    def send(self, _pad, seconds: float) -> None:
        self.sent.append(seconds)
        self.waiting += 1

    def start(self) -> None:
        self.waiting = max(0, self.waiting - 1)

    def cancel(self) -> None:
        self.cancelled += self.waiting
        self.waiting = 0


def driver_for(queue: Queue) -> HumanDriver:
    return HumanDriver(queue.send, lambda: queue.waiting, queue.cancel)


def test_each_press_is_a_step_even_while_one_waits(qtbot):
    queue = Queue()
    driver = driver_for(queue)
    for _ in range(4):  # four quick taps, events without a timestamp (as tests and other programs send them)
        driver.key_down(W, False)
        driver.key_up(W, False)
    assert len(queue.sent) == 4 and queue.cancelled == 0
    driver.stop()


def test_a_held_key_sends_the_next_step_only_when_none_waits(qtbot):
    queue = Queue()
    driver = driver_for(queue)
    driver.key_down(W, False, timestamp=1000)
    qtbot.wait(int(HUMAN_STEP_S * 1000 * 3))  # the game is slow: the first step never started
    assert len(queue.sent) == 1
    queue.start()  # it starts: the next may be sent once it is due
    qtbot.waitUntil(lambda: len(queue.sent) == 2, timeout=2_000)
    qtbot.wait(int(HUMAN_STEP_S * 1000 * 2))
    assert len(queue.sent) == 2 and queue.waiting == 1  # still one waiting, never more
    queue.start()  # the second starts, a third is queued behind it
    qtbot.waitUntil(lambda: len(queue.sent) == 3, timeout=2_000)
    driver.key_up(W, False, timestamp=3000)
    assert queue.cancelled == 1  # let go: the waiting step is dropped at once
    qtbot.waitUntil(lambda: driver.held is None, timeout=2_000)  # and the key is up once its grace is over
    assert queue.cancelled == 1 and len(queue.sent) == 3
    driver.stop()


def test_an_auto_repeat_pair_qt_did_not_flag_continues_the_hold(qtbot):
    queue = Queue()
    driver = driver_for(queue)
    driver.key_down(W, False, timestamp=1000)
    queue.start()
    for stamp in range(1040, 1040 + 40 * 20, 40):  # X's auto-repeat: release and press at one server time
        driver.key_up(W, False, timestamp=stamp)
        driver.key_down(W, False, timestamp=stamp)
    assert len(queue.sent) == 1 and driver.held is not None  # no new press, no release
    driver.key_up(W, False, timestamp=5000)  # the real release: final once no press follows it
    qtbot.waitUntil(lambda: driver.held is None, timeout=RELEASE_GRACE_MS * 10)
    driver.stop()


def test_a_release_then_a_new_press_at_another_time_is_a_new_step(qtbot):
    queue = Queue()
    driver = driver_for(queue)
    driver.key_down(W, False, timestamp=1000)
    queue.start()
    driver.key_up(W, False, timestamp=1100)
    driver.key_down(W, False, timestamp=1180)  # a person tapping again: another server time
    assert len(queue.sent) == 2
    driver.stop()


def test_no_step_is_sent_while_a_release_waits_out_its_grace(qtbot, monkeypatch):
    """A key let go just before the next step was due: until the release is final (RELEASE_GRACE_MS without the
    press of an auto-repeat pair), the driver sent that step, and had the step in progress ended meanwhile, it
    walked on after the key was up (a desktop run on a loaded machine counted two steps after key-up)."""
    clock = [100.0]
    monkeypatch.setattr("studio.human_control.time.monotonic", lambda: clock[0])
    queue = Queue()
    driver = driver_for(queue)
    driver.key_down(W, False, timestamp=1000)
    queue.start()  # the first step is in progress, none waits
    clock[0] += HUMAN_STEP_S - 0.01
    driver.key_up(W, False, timestamp=1240)  # let go 10 ms before the next step is due
    clock[0] += 0.02  # the next step is due, the release not final yet
    driver._tick()
    assert len(queue.sent) == 1
    clock[0] += RELEASE_GRACE_MS / 1000.0
    driver._tick()
    assert driver.held is None and len(queue.sent) == 1 and queue.cancelled == 0
    driver.stop()


def held_with_one_waiting(monkeypatch) -> tuple[list[float], Queue, HumanDriver]:
    """W held: its first step in progress and the second waiting behind it, on a clock the test moves."""
    clock = [100.0]
    monkeypatch.setattr("studio.human_control.time.monotonic", lambda: clock[0])
    queue = Queue()
    driver = driver_for(queue)
    driver.key_down(W, False, timestamp=1000)
    queue.start()
    clock[0] += HUMAN_STEP_S + 0.01
    driver._tick()
    assert len(queue.sent) == 2 and queue.waiting == 1
    return clock, queue, driver


def test_a_release_withdraws_the_waiting_step_at_once(qtbot, monkeypatch):
    """The release of a key that carried more than one step is final only after its grace; had the waiting step
    stayed queued meanwhile, the step in progress could end and the waiting one start: two steps after key-up."""
    clock, queue, driver = held_with_one_waiting(monkeypatch)
    driver.key_up(W, False, timestamp=1300)
    assert queue.cancelled == 1 and queue.waiting == 0  # before the grace is over
    clock[0] += RELEASE_GRACE_MS / 1000.0
    driver._tick()
    assert driver.held is None and len(queue.sent) == 2
    driver.stop()


def test_a_withdrawn_step_is_sent_again_when_the_release_was_an_auto_repeat(qtbot, monkeypatch):
    clock, queue, driver = held_with_one_waiting(monkeypatch)
    driver.key_up(W, False, timestamp=1300)
    driver.key_down(W, False, timestamp=1300)  # the press of X's auto-repeat pair, in a later read
    assert len(queue.sent) == 3 and queue.waiting == 1  # the hold goes on with one step waiting, at once
    clock[0] += RELEASE_GRACE_MS / 1000.0
    driver._tick()
    assert driver.held is not None and len(queue.sent) == 3 and queue.waiting == 1
    driver.stop()
