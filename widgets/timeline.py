"""Timeline: one tick per step, marks by kind, deadlock spans, a frame-exact cursor and zoom.

Everything is keyed by step position (0 .. count-1), never by time. Spans can be dragged by their
edges; the owner decides what a drag means (the label editor clamps and records it). Shift+click
selects from the cursor to the pointer; Shift+drag selects from where the drag starts to where it ends, e.g.
for a clip to export.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QWheelEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

MARK_COLORS = {"success": QColor(30, 160, 60), "intervention": QColor(200, 0, 150), "human": QColor(0, 150, 170),
               "parse_error": QColor(70, 70, 70),  # dark grey: apart from the Unaware span's red
               "bump": QColor(20, 60, 200)}  # a loud onset in the step's sound: drawn last, over a human mark
SPAN_COLORS = {"suggested": QColor(255, 170, 170, 150), "aware": QColor(255, 150, 0, 200),
               "unaware": QColor(200, 30, 30, 200), "unclassified": QColor(120, 120, 200, 200),
               "rejected": QColor(170, 170, 170, 90)}
SELECTION_COLOR = QColor(40, 110, 230, 60)
SELECTION_EDGE = QColor(40, 110, 230)
EDGE_GRAB_PX = 5
DRAG_START_PX = 4  # a Shift+press that moves this far is a drag, not a click
_ROW = 12
_LEGEND_TOP = 18 + _ROW + 4 + _ROW + 6 + 6
_LEGEND_LINE = 15
_LEGEND = (("success", MARK_COLORS["success"]), ("intervention", MARK_COLORS["intervention"]),
           ("human", MARK_COLORS["human"]), ("parse error", MARK_COLORS["parse_error"]),
           ("bump heard", MARK_COLORS["bump"]),
           ("suggested", SPAN_COLORS["suggested"]), ("Aware", SPAN_COLORS["aware"]),
           ("Unaware", SPAN_COLORS["unaware"]), ("unclassified", SPAN_COLORS["unclassified"]),
           ("selected (Shift+drag)", QColor(40, 110, 230, 110)))


@dataclass(frozen=True)
class TimelineSpan:
    start: int  # step positions, inclusive
    end: int
    style: str  # a SPAN_COLORS key
    label: str = ""


class Timeline(QWidget):
    sig_seek = Signal(int)                    # step position the user clicked or dragged the cursor to
    sig_span_clicked = Signal(int)            # index into the spans last given to set_spans
    sig_span_edge_moved = Signal(int, int, int)  # span index, new start, new end (on release)
    sig_selection_changed = Signal(int, int)  # selected step positions, inclusive; (-1, -1) when cleared

    def __init__(self) -> None:
        super().__init__()
        self.setMinimumHeight(_LEGEND_TOP + 2 * _LEGEND_LINE)  # room for the legend on two lines
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        # A click takes the keyboard focus, so the owner's keys (steps, Export clip…) work right after it
        # instead of going to whatever had focus before (a tab bar turns the page on an arrow key).
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.empty_text = "Open an episode to see its timeline"
        self.count = 0
        self.cursor_index = 0
        self.view = (0.0, 1.0)  # visible positions [first, last + 1)
        self.marks: dict[str, list[int]] = {}
        self.spans: list[TimelineSpan] = []
        self.selected_span: int | None = None
        self._labels: list[int] = []
        self._drag: tuple[int, str] | None = None  # span index, "start" | "end"
        self._drag_preview: TimelineSpan | None = None
        self._scrubbing = False
        self.selection: tuple[int, int] | None = None
        self._selecting_from: int | None = None
        self._shift_press_x: float | None = None  # where a Shift+press began, until it moves (then a drag)

    # -- data ----------------------------------------------------------------------------------
    def set_episode(self, count: int, step_numbers: list[int]) -> None:
        self.count, self._labels = count, list(step_numbers)
        self.cursor_index, self.view = 0, (0.0, float(max(count, 1)))
        self.marks, self.spans, self.selected_span = {}, [], None
        self.clear_selection()
        self.update()

    def set_selection(self, start: int, end: int) -> None:
        if self.count == 0:
            return
        low, high = sorted((max(0, min(start, self.count - 1)), max(0, min(end, self.count - 1))))
        if self.selection != (low, high):
            self.selection = (low, high)
            self.sig_selection_changed.emit(low, high)
        self.update()

    def clear_selection(self) -> None:
        if self.selection is not None:
            self.selection = None
            self.sig_selection_changed.emit(-1, -1)
        self.update()

    def append_step(self, step_number: int) -> None:
        """One more step (a live episode): the view keeps following the end unless the user zoomed away."""
        following = self.view[1] >= self.count
        self.count += 1
        self._labels.append(step_number)
        if following:
            width = self.view[1] - self.view[0]
            self.view = (0.0, float(self.count)) if self.view[0] == 0 else (self.count - width, float(self.count))
        self.update()

    def set_cursor(self, position: int) -> None:
        self.cursor_index = max(0, min(position, self.count - 1))
        first, last = self.view
        if not first <= self.cursor_index < last:  # keep the cursor in view while zoomed
            width = last - first
            first = max(0.0, min(self.cursor_index - width / 2, self.count - width))
            self.view = (first, first + width)
        self.update()

    def set_marks(self, marks: dict[str, list[int]]) -> None:
        self.marks = marks
        self.update()

    def set_spans(self, spans: list[TimelineSpan], selected: int | None = None) -> None:
        self.spans, self.selected_span = spans, selected
        self.update()

    # -- zoom ------------------------------------------------------------------------------------
    def zoom(self, factor: float, around: float | None = None) -> None:
        if self.count == 0:
            return
        first, last = self.view
        centre = self.cursor_index + 0.5 if around is None else around
        width = min(float(self.count), max(10.0, (last - first) / factor))
        first = max(0.0, min(centre - (centre - first) * width / (last - first), self.count - width))
        self.view = (first, first + width)
        self.update()

    def fit(self) -> None:
        self.view = (0.0, float(max(self.count, 1)))
        self.update()

    # -- geometry --------------------------------------------------------------------------------
    def _x(self, position: float) -> float:
        first, last = self.view
        return 4 + (position - first) / (last - first) * (self.width() - 8)

    def position_at(self, x: float) -> int:
        first, last = self.view
        position = first + (x - 4) / max(1.0, self.width() - 8) * (last - first)
        return int(max(0, min(self.count - 1, position)))

    def _span_row(self) -> QRectF:
        return QRectF(0, 18 + _ROW + 4, self.width(), _ROW + 6)

    # -- painting --------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(250, 250, 250))
        if self.count == 0:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            return
        self._paint_selection(painter)
        self._paint_ticks(painter)
        self._paint_marks(painter)
        self._paint_spans(painter)
        self._paint_legend(painter)
        x = self._x(self.cursor_index + 0.5)
        painter.setPen(QPen(QColor(20, 20, 20), 2))
        painter.drawLine(QPointF(x, 0), QPointF(x, self.height()))
        painter.end()

    def _paint_ticks(self, painter: QPainter) -> None:
        first, last = self.view
        pixels_per_step = (self.width() - 8) / (last - first)
        every = 1
        while pixels_per_step * every < 3:  # thin out ticks when a pixel holds several steps
            every *= 2
        painter.setPen(QPen(QColor(150, 150, 150), 1))
        start = int(first) - int(first) % every
        for position in range(start, int(last) + 1, every):
            x = self._x(position + 0.5)
            painter.drawLine(QPointF(x, 0), QPointF(x, 6))
        label_every = every
        while pixels_per_step * label_every < 60:
            label_every *= 5 if str(label_every).startswith("2") else 2
        painter.setPen(QColor(90, 90, 90))
        start = int(first) - int(first) % label_every
        for position in range(max(0, start), min(self.count, int(last) + 1), label_every):
            step = self._labels[position] if position < len(self._labels) else position + 1
            painter.drawText(QPointF(self._x(position + 0.5) + 2, 15), str(step))

    def _paint_selection(self, painter: QPainter) -> None:
        if self.selection is None:
            return
        start, end = self.selection
        rect = QRectF(QPointF(self._x(start), 0), QPointF(self._x(end + 1), self._span_row().bottom()))
        painter.fillRect(rect, SELECTION_COLOR)
        painter.setPen(QPen(SELECTION_EDGE, 1))
        painter.drawLine(rect.topLeft(), rect.bottomLeft())
        painter.drawLine(rect.topRight(), rect.bottomRight())

    def _paint_legend(self, painter: QPainter) -> None:
        x, top = 6.0, float(_LEGEND_TOP)
        metrics = painter.fontMetrics()
        for text, color in _LEGEND:
            width = 13 + metrics.horizontalAdvance(text) + 12
            if x + width > self.width() and x > 6:  # wrap rather than clip in a narrow window
                x, top = 6.0, top + _LEGEND_LINE
            painter.fillRect(QRectF(x, top + 3, 10, 9), color)
            painter.setPen(QColor(70, 70, 70))
            painter.drawText(QPointF(x + 13, top + 12), text)
            x += width

    def _paint_marks(self, painter: QPainter) -> None:
        top = 18.0
        for kind, color in MARK_COLORS.items():
            painter.setPen(QPen(color, 2))
            for position in self.marks.get(kind, []):
                x = self._x(position + 0.5)
                if kind == "bump":  # a small triangle on the tick's lower half: a human tick shows above it
                    painter.setBrush(color)
                    painter.drawPolygon([QPointF(x - 3, top + _ROW - 1), QPointF(x + 3, top + _ROW - 1),
                                         QPointF(x, top + _ROW - 7)])
                    continue
                painter.drawLine(QPointF(x, top), QPointF(x, top + _ROW - 2))
        painter.setPen(QColor(120, 120, 120))

    def _paint_spans(self, painter: QPainter) -> None:
        row = self._span_row()
        for index, span in enumerate(self.spans):
            shown = self._drag_preview if self._drag and self._drag[0] == index and self._drag_preview else span
            rect = QRectF(QPointF(self._x(shown.start), row.top()), QPointF(self._x(shown.end + 1), row.bottom()))
            painter.fillRect(rect, SPAN_COLORS.get(shown.style, SPAN_COLORS["unclassified"]))
            if index == self.selected_span:
                painter.setPen(QPen(QColor(0, 0, 0), 2))
                painter.drawRect(rect)
            if shown.label and rect.width() > 30:
                painter.setPen(QColor(0, 0, 0))
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, shown.label)

    # -- mouse -----------------------------------------------------------------------------------
    def _edge_at(self, x: float, y: float) -> tuple[int, str] | None:
        if not self._span_row().contains(QPointF(self.width() / 2, y)):
            return None
        for index, span in enumerate(self.spans):
            for edge, position in (("start", span.start), ("end", span.end + 1)):
                if abs(self._x(position) - x) <= EDGE_GRAB_PX:
                    return index, edge
        return None

    def _span_at(self, x: float, y: float) -> int | None:
        if not self._span_row().contains(QPointF(self.width() / 2, y)):
            return None
        position = self.position_at(x)
        return next((i for i, s in enumerate(self.spans) if s.start <= position <= s.end), None)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.count == 0 or event.button() != Qt.MouseButton.LeftButton:
            return
        x, y = event.position().x(), event.position().y()
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            # a click extends from the cursor; once the pointer moves it is a drag, anchored where it pressed
            self._selecting_from, self._shift_press_x = self.cursor_index, x
            self.set_selection(self.cursor_index, self.position_at(x))
            return
        edge = self._edge_at(x, y)
        if edge is not None:
            self._drag, self._drag_preview = edge, self.spans[edge[0]]
            return
        span = self._span_at(x, y)
        if span is not None:
            self.sig_span_clicked.emit(span)
        self._scrubbing = True
        self.sig_seek.emit(self.position_at(x))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        x, y = event.position().x(), event.position().y()
        if self._selecting_from is not None:
            if self._shift_press_x is not None and abs(x - self._shift_press_x) >= DRAG_START_PX:
                self._selecting_from, self._shift_press_x = self.position_at(self._shift_press_x), None
            if self._shift_press_x is None:
                self.set_selection(self._selecting_from, self.position_at(x))
            return
        if self._drag is not None:
            index, edge = self._drag
            span = self.spans[index]
            first, last = self.view
            boundary = round(first + (x - 4) / max(1.0, self.width() - 8) * (last - first))  # nearest step edge
            if edge == "start":
                start = max(0, min(boundary, span.end))
                self._drag_preview = TimelineSpan(start, span.end, span.style, span.label)
            else:
                end = min(self.count - 1, max(boundary - 1, span.start))
                self._drag_preview = TimelineSpan(span.start, end, span.style, span.label)
            self.update()
        elif self._scrubbing:
            self.sig_seek.emit(self.position_at(x))
        else:
            near_edge = self._edge_at(x, y) is not None
            self.setCursor(Qt.CursorShape.SizeHorCursor if near_edge else Qt.CursorShape.ArrowCursor)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._selecting_from, self._shift_press_x = None, None
        if self._drag is not None and self._drag_preview is not None:
            index = self._drag[0]
            preview = self._drag_preview
            self._drag, self._drag_preview = None, None
            if (preview.start, preview.end) != (self.spans[index].start, self.spans[index].end):
                self.sig_span_edge_moved.emit(index, preview.start, preview.end)
            self.update()
        self._scrubbing = False

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.count == 0:
            return
        first, last = self.view
        around = first + (event.position().x() - 4) / max(1.0, self.width() - 8) * (last - first)
        self.zoom(1.25 if event.angleDelta().y() > 0 else 0.8, around)
