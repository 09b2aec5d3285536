"""Settings store values, not captions; captions saved by older versions are read once and converted."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from studio.live_controls import CLOCKS, GRANULARITIES, PACES, LiveControls, caption_for, setting_value


def test_values_are_stored_and_old_captions_still_read():
    assert setting_value(GRANULARITIES, "Step-guided") == "step_guided"
    assert setting_value(PACES, "as fast as it runs") == "none"
    assert caption_for(GRANULARITIES, "step_guided") == "Step-guided"
    assert caption_for(PACES, "none") == "as fast as it runs"
    assert caption_for(CLOCKS, "Real time (30 fps, like an emulator)") == "Real time (30 fps, like an emulator)"
    assert caption_for(CLOCKS, 3) is None


def test_live_choices_round_trip_as_values_and_old_caption_settings_convert(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "studio.ini"), QSettings.Format.IniFormat)
    settings.setValue("live/granularity", "Goal-only")  # as an older version wrote it
    settings.setValue("live/clock", "realtime")
    settings.setValue("live/pace", "a caption that no longer exists")
    controls = LiveControls(["q01"])
    qtbot.addWidget(controls)
    pace_before = controls.pace.currentText()
    controls.restore(settings)
    assert controls.granularity.currentText() == "Goal-only" and controls.clock_mode == "realtime"
    assert controls.pace.currentText() == pace_before  # ignored safely
    controls.save(settings)
    assert settings.value("live/granularity") == "goal_only" and settings.value("live/clock") == "realtime"


def test_an_external_game_shows_real_time_and_the_built_in_worlds_choice_comes_back(qtbot, tmp_path):
    """Minetest runs in real time whatever the box said: it says so, greyed out, without restarting anything; back
    on the built-in world the user's lockstep is there again, and it is what the settings keep meanwhile."""
    controls = LiveControls(["q01"])
    qtbot.addWidget(controls)
    restarts: list[str] = []
    controls.sig_clock_changed.connect(restarts.append)
    controls.clock.setCurrentText(caption_for(CLOCKS, "lockstep"))
    restarts.clear()
    controls.show_game_clock(builtin=False)
    assert controls.clock.currentText() == caption_for(CLOCKS, "realtime")
    assert not controls.clock.isEnabled() and not controls.pace.isEnabled()
    settings = QSettings(str(tmp_path / "studio.ini"), QSettings.Format.IniFormat)
    controls.save(settings)
    assert settings.value("live/clock") == "lockstep"
    controls.show_game_clock(builtin=True)
    assert controls.clock.currentText() == caption_for(CLOCKS, "lockstep") and controls.clock.isEnabled()
    assert controls.pace.isEnabled() and controls.clock_mode == "lockstep"
    assert restarts == []  # the game's own clock changed nothing


def test_settings_restored_while_an_external_game_shows_keep_the_built_in_worlds_choice(qtbot, tmp_path):
    """Restored while Minetest shows real time: the box keeps saying so, and the restored lockstep waits for the
    built-in world; nothing restarts."""
    settings = QSettings(str(tmp_path / "studio.ini"), QSettings.Format.IniFormat)
    settings.setValue("live/clock", "lockstep")
    controls = LiveControls(["q01"])
    qtbot.addWidget(controls)
    controls.clock.setCurrentText(caption_for(CLOCKS, "realtime"))
    restarts: list[str] = []
    controls.sig_clock_changed.connect(restarts.append)
    controls.show_game_clock(builtin=False)
    controls.restore(settings)
    assert controls.clock.currentText() == caption_for(CLOCKS, "realtime") and not controls.clock.isEnabled()
    assert controls.clock_mode == "lockstep" and not controls.pace.isEnabled() and restarts == []
    controls.show_game_clock(builtin=True)
    assert controls.clock.currentText() == caption_for(CLOCKS, "lockstep")
