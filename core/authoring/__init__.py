"""Task authoring without Qt: a draft built from the evaluator's samples, saving, and trying a task.

The studio's authoring panel calls this API; `python main.py tasks try FILE` uses try_task.
"""

from core.authoring.draft import TaskDraft
from core.authoring.save import TaskExistsError, save_task
from core.authoring.try_task import TryResult, try_task

__all__ = ["TaskDraft", "TaskExistsError", "TryResult", "save_task", "try_task"]
