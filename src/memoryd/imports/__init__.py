"""File import (seed 000 §1.2): formats, strategy, split, extraction, tasks and rollback."""
