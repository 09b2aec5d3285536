"""Help → Keyboard shortcuts: every key of the studio in a two-column table that scrolls, sized to fit
a 1280×720 screen. Not modal: it can stay open beside the window while one learns the keys."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

MAX_SIZE = (760, 560)  # within 1280×720 with room for the title bar and a panel


class ShortcutsDialog(QDialog):
    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Keys", "What it does"])
        for row, (keys, what) in enumerate(rows):
            for column, text in enumerate((keys, what)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, column, item)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(True)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.resizeRowsToContents()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.table)
        # a window manager's title bar is not everywhere (a tiling one, a kiosk, Xvfb): closing needs a button
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(*MAX_SIZE)
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        if screen is not None:  # a smaller screen still shows the whole dialog; the table scrolls
            self.resize(min(MAX_SIZE[0], screen.width() - 40), min(MAX_SIZE[1], screen.height() - 80))
