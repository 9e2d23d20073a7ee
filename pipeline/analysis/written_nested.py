"""The work of written_programs' further passes (:class:`Nested`): each trajectory's budgets
of nested rows and work, the steps whose nested runs were not followed, and the known texts
the passes follow (:mod:`pipeline.analysis.written`)."""

from __future__ import annotations

from pipeline.analysis.written_pieces import Budgets
from pipeline.analysis.written_rows import WROTE, written_name

# per program (its program_id): the known texts it writes (name, text, appended), as
# ``Found.texts``
Texts = dict[int, tuple[tuple[str, str, bool], ...]]
PAST_BOUND = ("the written programs it runs in turn are past the trajectory's bound of nested work "
              "(NESTED_ROWS_PER_TRAJECTORY, NESTED_WORK_PER_TRAJECTORY)")
PAST_TEXTS = ("the texts the written programs it runs write are past the trajectory's bound "
              "(NESTED_TEXTS_PER_TRAJECTORY, NESTED_TEXT_WORK_PER_TRAJECTORY)")


class Nested:
    """The work of a shard's further passes: each trajectory's budgets of nested rows
    (``NESTED_ROWS_PER_TRAJECTORY``: a script run again, unchanged, in the same folders, is
    charged once, as an agent re-running `ci.sh`) and of nested work (every run:
    ``NESTED_WORK_PER_TRAJECTORY``), and the steps whose nested runs were not followed
    (fail closed: opaque); and the known texts the passes follow: the program steps' own
    (``shell_texts``, by ``program_id``) and those the written programs they followed write
    (:meth:`wrote`)."""

    def __init__(self, texts: Texts, failed: set[tuple[str, int]] | None = None) -> None:
        self.texts: Texts = dict(texts)
        self._failed = failed or set()  # (trajectory_id, step_idx) of the calls that failed
        self._ids: dict[tuple[str, int, tuple[tuple[str, str, bool], ...]], int] = {}
        self.budgets = Budgets()
        self.charged: set[tuple[str, str, tuple[str, ...], frozenset[tuple[str, str]]]] = set()
        self.past: set[tuple[str, int, str]] = set()
        self._stopped: set[str] = set()
        self._charged_texts: dict[str, set[tuple[str, str]]] = {}  # per trajectory: (file, text) charged

    def stop(self, trajectory_id: str, step_idx: int, reason: str) -> None:
        """A run of the step is not followed: the step is opaque (and so, unless its call
        failed, the trajectory goes to attrition: no later run of it is followed,
        :meth:`stopped`; sql/step_rejects.sql passes over a failed call's opaque step)."""
        self.past.add((trajectory_id, step_idx, reason))
        if (trajectory_id, step_idx) not in self._failed:  # a failed call's opaque step rejects nothing
            self._stopped.add(trajectory_id)

    def stopped(self, trajectory_id: str) -> bool:
        """Whether a step of the trajectory is opaque already: following more of its runs
        would change nothing scored (a hostile record past a bound costs no more)."""
        return trajectory_id in self._stopped

    def spent(self, trajectory_id: str) -> bool:
        """Whether the trajectory has no nested rows or work left."""
        return self.budgets.spent(trajectory_id, "nested_rows") or self.budgets.spent(trajectory_id, "nested_work")

    def charge(self, trajectory_id: str, name: str, folders: list[str] | None, got: set[tuple[str, str]]) -> bool:
        """Whether the rows ``got`` of a run of ``name`` in ``folders`` fit the trajectory's
        budgets: its work (every run) and its rows (unless the same run was charged before);
        past either, nothing more."""
        if not self.budgets.charge(trajectory_id, "nested_work", len(got)):
            self.budgets.end(trajectory_id, "nested_work")
            return False
        key = (trajectory_id, name, tuple(folders or ()), frozenset(got))
        if key in self.charged:
            return True
        if not self.budgets.charge(trajectory_id, "nested_rows", len(got)):
            self.budgets.end(trajectory_id, "nested_rows")
            return False
        self.charged.add(key)
        return True

    def texts_fit(self, trajectory_id: str, got: set[tuple[str, str]]) -> bool:
        """Whether the known texts a run hands on (its :data:`WROTE` rows) fit the
        trajectory's budgets: ``nested_texts``, each distinct file and text charged once (an
        agent re-running an unchanged setup script), and ``nested_text_work``, every run's
        (every pass); past either, nothing more."""
        rows = [(written_name(access[len(WROTE):]), text) for access, text in got if access.startswith(WROTE)]
        if not rows:
            return True
        texts = set(rows)
        if not self.budgets.charge(trajectory_id, "nested_text_work", len(rows)):  # every row, repeats too
            self.budgets.end(trajectory_id, "nested_text_work")
            return False
        new = texts - self._charged_texts.get(trajectory_id, set())
        if new and not self.budgets.charge(trajectory_id, "nested_texts", len(new)):
            self.budgets.end(trajectory_id, "nested_texts")
            return False
        self._charged_texts.setdefault(trajectory_id, set()).update(new)
        return True

    def wrote(self, rows: list[tuple[str, int, str, str]]) -> list[tuple[str, int, int, int, str]]:
        """The ``shell_texts`` rows (trajectory_id, step_idx, program_id, k, name) of the
        known texts (trajectory_id, step_idx, :data:`WROTE` key, text) that the written
        programs a step runs write, in the order each wrote them (the key orders them), new to
        this shard: the texts of a step are one program of their own, its ``program_id``
        below 0 (a program step's are 0, 1, ...), its texts in :attr:`texts` for the next pass,
        ``k`` their order (sql/written_runs.sql replays a step's writes by ``k``)."""
        steps: dict[tuple[str, int], list[tuple[str, str]]] = {}
        for t, step, key, text in sorted(rows):
            steps.setdefault((t, step), []).append((key, text))
        out = []
        for (t, step), written in steps.items():
            texts = tuple((written_name(key), text, False) for key, text in written)
            if (t, step, texts) in self._ids:
                continue
            program_id = -1 - len(self._ids)
            self._ids[t, step, texts] = program_id
            self.texts[program_id] = texts
            out.extend((t, step, program_id, k, name) for k, (name, _, _) in enumerate(texts))
        return out
