"""The installed Qt bindings must not corrupt reference counts: PySide6 6.12.0 drops a reference to
None on every void call, and a studio left running then crashes ("deallocating None")."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("PySide6")


def test_void_qt_calls_leave_none_and_true_alone(qapp):
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtWidgets import QLabel

    image = QImage(32, 32, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    label = QLabel()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for i in range(500):
        painter.drawLine(QPointF(0, 0), QPointF(5, 5))
        label.setText(str(i))
        label.setVisible(True)
    painter.end()
    # Other threads may take or drop a few references meanwhile; a leak is one per call (1,500 here).
    assert abs(sys.getrefcount(None) - none_before) < 100
    assert abs(sys.getrefcount(True) - true_before) < 100
