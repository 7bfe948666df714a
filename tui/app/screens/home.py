"""Home: example specs to run, saved sessions to resume or replay."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.events import Key
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from tui.app.components.key_footer import KeyFooter
from tui.app.messages import SessionChosen
from tui.app.screens.too_small import NARROW_BELOW
from tui.commands.inbox import Awaiting, awaiting, tally_text
from tui.engine.basics.bounded import SESSION_BYTES, TomlRefused, toml_document
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.engine.basics.vocab import DEFAULT_PROTOCOL, ESCALATE, is_deferral
from tui.engine.record.fileformat import COMMIT, SCHEMA
from tui.render.textsafe import shorten

MAX_SESSIONS = 300
OFFLINE_MODELS = frozenset({"scripted", "local"})
_STAMP = re.compile(r"^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})")


@dataclass
class ExampleRow:
    path: Path
    title: str
    protocol: str
    debaters: str
    problem: str = ""
    offline: bool = True  # every model scripted or embedded: runs with no key, no server


@dataclass
class SessionRow:
    path: Path
    title: str
    protocol: str
    decision: str
    date: str
    turns: int


def list_examples(directory: Path) -> list[ExampleRow]:
    from tui.engine.basics.errors import SpecError
    from tui.engine.specs.spec import read_spec_file

    rows: list[ExampleRow] = []
    for path in sorted(directory.glob("*.toml")) if directory.is_dir() else []:
        try:
            spec, _ = read_spec_file(path)
        except SpecError as err:
            rows.append(ExampleRow(path, path.stem, "?", "", "; ".join(err.problems)[:200]))
            continue
        models = sorted({d.model for d in spec.debaters})
        rows.append(
            ExampleRow(
                path,
                spec.debate.title,
                spec.debate.protocol,
                f"{len(spec.debaters)} ({', '.join(models)})",
                offline=all(m in OFFLINE_MODELS for m in models),
            )
        )
    return sorted(rows, key=lambda row: not row.offline)  # what runs here first


def _date(path: Path) -> str:
    m = _STAMP.match(path.stem)
    if m:
        y, mo, d, h, mi, _ = m.groups()
        return f"{y}-{mo}-{d} {h}:{mi}"
    return ""


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    """``doc[key]`` when it is a table, else an empty one (a peek never raises)."""
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _created(doc: dict[str, Any]) -> str:
    """The header's ``created``, in local time as a file name's stamp is: the date of a
    session renamed without its stamp."""
    created = _table(doc, "session").get("created")
    try:
        when = datetime.fromisoformat(created) if isinstance(created, str) else None
    except ValueError:
        return ""
    return "" if when is None else f"{when.astimezone():%Y-%m-%d %H:%M}"


def list_sessions(directory: Path) -> list[SessionRow]:
    """Newest first; read without validating every turn (fast), damaged files flagged."""
    if not directory.is_dir():
        return []
    dated: list[tuple[str, float, Path]] = []
    for p in directory.glob("*.toml"):
        try:  # a dangling link, or a file gone since the listing, is not a session
            if not p.name.startswith("."):
                dated.append((_date(p) or "", p.stat().st_mtime, p))
        except OSError:
            continue
    files = [p for *_, p in sorted(dated, key=lambda d: d[:2], reverse=True)]
    rows: list[SessionRow] = []
    for path in files[:MAX_SESSIONS]:
        try:  # bounded, regular files only: a FIFO or a depth bomb must not hang the list
            data = read_regular(path, SESSION_BYTES)
            cut = data.rfind(COMMIT.encode())
            doc = toml_document(data[: cut + len(COMMIT)] if cut >= 0 else data)
        except (FileRefused, TomlRefused):
            rows.append(SessionRow(path, path.stem, "?", "damaged", _date(path), 0))
            continue
        if doc.get("schema") != SCHEMA:
            continue
        debate = _table(_table(doc, "spec"), "debate")
        result = doc.get("result") if isinstance(doc.get("result"), dict) else None
        turns = doc.get("turns")
        if result is None:
            decision = "in progress"
        elif is_deferral(result.get("decision"), result.get("decision_rule")):
            decision = "deferred"
        elif result.get("decision") == ESCALATE:
            decision = "unresolved"
        else:
            decision = f"{result.get('decision', '?')} ({result.get('decided_by', 'rule')})"
        rows.append(
            SessionRow(
                path,
                str(debate.get("title", path.stem)),
                str(debate.get("protocol", DEFAULT_PROTOCOL)),
                decision,
                _date(path) or _created(doc),
                len(turns) if isinstance(turns, list) else 0,
            )
        )
    return sorted(rows, key=lambda row: row.date, reverse=True)  # a renamed one in its place


def home_columns(width: int) -> dict[str, list[tuple[str, int]]]:
    """Each table's (label, width) columns for a terminal ``width`` wide.

    Fixed widths, so the layout does not jump when the rows arrive; below
    ``NARROW_BELOW`` columns the title takes what the others leave and the file
    name scrolls in from the right.
    """
    narrow = width < NARROW_BELOW
    tables = {
        "awaiting": [
            ("title", 40),
            ("protocol", 10),
            ("rule", 16 if narrow else 22),
            ("tally", 16 if narrow else 24),
        ],
        "examples": [
            ("title", 44),
            ("protocol", 10),
            ("debaters", 22 if narrow else 34),
            ("file", 30),
        ],
        "keyed": [
            ("title", 44),
            ("protocol", 10),
            ("debaters", 22 if narrow else 34),
            ("file", 30),
        ],
        "sessions": [
            ("date", 16),
            ("title", 40),
            ("protocol", 10),
            ("decision", 14),
            ("turns", 5),
            ("file", 30),
        ],
    }
    if not narrow:
        return tables

    def fit(columns: list[tuple[str, int]]) -> list[tuple[str, int]]:
        fixed = sum(w for label, w in columns if label not in ("title", "file"))
        title = max(16, width - 4 - fixed - 2 * (len(columns) - 1))
        return [(label, title if label == "title" else w) for label, w in columns]

    return {table: fit(columns) for table, columns in tables.items()}


class HomeScreen(Screen[None]):
    BINDINGS = [
        Binding("enter", "open", "Run / replay", show=True),
        Binding("r", "resume", "Resume"),
        Binding("p", "replay", "Replay"),
        Binding("k", "fork", "Fork"),
        Binding("n", "new_spec", "New spec"),
        Binding("slash", "filter", "Filter"),
        Binding("R", "rename", "Rename"),
        Binding("delete", "delete", "Delete"),
        Binding("D", "delete", "Delete", show=False),
        Binding("f5", "reload", "Reload"),
        Binding("tab", "app.focus_next", "Switch list", show=False),
        Binding("q", "app.quit", "Quit"),
    ]

    class Loaded(Message):
        def __init__(
            self,
            examples: list[ExampleRow],
            sessions: list[SessionRow],
            waiting: list[Awaiting] | None = None,
        ) -> None:
            super().__init__()
            self.examples = examples
            self.sessions = sessions
            self.waiting = waiting or []

    def __init__(self, examples_dir: Path, sessions_dir: Path) -> None:
        super().__init__()
        self.examples_dir = examples_dir
        self.sessions_dir = sessions_dir
        self.examples: list[ExampleRow] = []
        self.sessions: list[SessionRow] = []
        self.waiting: list[Awaiting] = []
        self._columns: dict[str, list[tuple[str, int]]] = {}
        self.filter = ""  # what the filter field holds, casefolded

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble(
                ("moot", "bold $accent"),
                (
                    "  structured LLM debates, live — code owns the debate, models fill in turns",
                    "$text-muted",
                ),
            ),
            id="brand",
            markup=False,
        )
        yield Input(
            placeholder="/ filter by title, file, protocol or decision", id="filter", compact=True
        )
        with Vertical():
            yield Static(
                Content("Awaiting you  (enter: open and decide)"),
                classes="section",
                id="awaiting-title",
                markup=False,
            )
            yield DataTable(id="awaiting", cursor_type="row", zebra_stripes=True)
            yield Static(
                Content("Example debates, no key needed  (enter: run)"),
                classes="section",
                markup=False,
            )
            yield DataTable(id="examples", cursor_type="row", zebra_stripes=True)
            yield Static(
                Content(
                    "Examples that need an API key or a model server  (enter: check them, then run)"
                ),
                classes="section",
                id="keyed-title",
                markup=False,
            )
            yield DataTable(id="keyed", cursor_type="row", zebra_stripes=True)
            yield Static(
                Content("Saved sessions  (enter: replay · r: resume)"),
                classes="section",
                markup=False,
            )
            yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
            yield Static(Content(""), id="sessions-empty", classes="empty", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        self._lay_out_columns(self.app.size.width)
        self.query_one("#examples", DataTable).focus()
        self.load()

    def on_resize(self) -> None:
        """Fit the columns again: the title column takes what the terminal leaves."""
        if home_columns(self.app.size.width) != self._columns:
            cursors = self._cursors()
            self._lay_out_columns(self.app.size.width)
            self._fill(cursors)

    def _lay_out_columns(self, width: int) -> None:
        self._columns = home_columns(width)
        for table_id, columns in self._columns.items():
            table = self.query_one(f"#{table_id}", DataTable)
            table.clear(columns=True)
            for label, w in columns:
                table.add_column(label, width=w)

    @work(thread=True, exclusive=True, group="home-load")
    def load(self) -> None:
        self.post_message(
            self.Loaded(
                list_examples(self.examples_dir),
                list_sessions(self.sessions_dir),
                awaiting(self.sessions_dir),
            )
        )

    def _show_waiting(self, show: bool) -> None:
        """The "awaiting you" group shows only when a session waits for a decision."""
        self.query_one("#awaiting-title", Static).display = show
        self.query_one("#awaiting", DataTable).display = show

    def on_home_screen_loaded(self, message: Loaded) -> None:
        self.examples = message.examples
        self.sessions = message.sessions
        self.waiting = message.waiting
        self._fill()
        keyed = any(not row.offline for row in self.examples)
        self.query_one("#keyed-title", Static).display = keyed
        self.query_one("#keyed", DataTable).display = keyed
        if self.shown_waiting() and self.focused is self.query_one("#examples", DataTable):
            self.query_one("#awaiting", DataTable).focus()  # what waits for the operator first

    def _cursors(self) -> dict[str, int]:
        return {str(table.id): table.cursor_row for table in self.query(DataTable)}

    def _fill(self, cursors: dict[str, int] | None = None) -> None:
        """The rows, from what was loaded last; each table keeps its cursor row."""
        cursors = self._cursors() if cursors is None else cursors
        aw = self.query_one("#awaiting", DataTable)
        ex = self.query_one("#examples", DataTable)
        se = self.query_one("#sessions", DataTable)
        aw.clear()
        cell = self._cell
        for a in self.shown_waiting():
            aw.add_row(
                cell("awaiting", "title", a.title),
                cell("awaiting", "protocol", a.protocol),
                cell("awaiting", "rule", a.why),
                cell("awaiting", "tally", tally_text(a.vote_tally)),
            )
        ke = self.query_one("#keyed", DataTable)
        for table, offline in ((ex, True), (ke, False)):
            table.clear()
            name = str(table.id)
            for row in self._examples(offline):
                title = cell(name, "title", row.title)
                if row.problem:
                    cut = Text(shorten(row.title, self._width(name, "title") - len(" (invalid)")))
                    title = Text.assemble(cut, (" (invalid)", "red"))
                table.add_row(
                    title,
                    cell(name, "protocol", row.protocol),
                    cell(name, "debaters", row.debaters),
                    cell(name, "file", row.path.name),
                )
        se.clear()
        for s in self.shown_sessions():
            se.add_row(
                cell("sessions", "date", s.date),
                cell("sessions", "title", s.title),
                cell("sessions", "protocol", s.protocol),
                cell("sessions", "decision", s.decision),
                Text(str(s.turns)),
                cell("sessions", "file", s.path.name),
            )
        for table in (aw, ex, ke, se):
            if table.row_count:
                table.move_cursor(row=min(cursors.get(str(table.id), 0), table.row_count - 1))
        self._show_waiting(bool(aw.row_count))
        empty = self.query_one("#sessions-empty", Static)
        if not self.sessions:
            note = f"No saved sessions yet in {shorten(str(self.sessions_dir), 80)}"
        elif not se.row_count:
            note = "No saved session matches the filter (Esc in the filter clears it)"
        else:
            note = ""
        empty.update(Content(note))

    def _width(self, table: str, column: str) -> int:
        return dict(self._columns.get(table, [])).get(column, 60)

    def _cell(self, table: str, column: str, text: str) -> Text:
        """One line cut to its column with ``…``: a table would cut it with no mark."""
        return Text(shorten(text, self._width(table, column)))

    def _examples(self, offline: bool) -> list[ExampleRow]:
        return [
            row
            for row in self.examples
            if row.offline == offline
            and self._matches(row.title, row.protocol, row.debaters, row.path.name)
        ]

    def shown_waiting(self) -> list[Awaiting]:
        """The sessions awaiting a person that the filter lets through."""
        return [a for a in self.waiting if self._matches(a.title, a.protocol, a.why, a.path.name)]

    def shown_sessions(self) -> list[SessionRow]:
        """The saved sessions the filter lets through, newest first."""
        return [
            s
            for s in self.sessions
            if self._matches(s.title, s.protocol, s.decision, s.date, s.path.name)
        ]

    def _matches(self, *fields: str) -> bool:
        return not self.filter or any(self.filter in f.casefold() for f in fields)

    # ------------------------------------------------------------ filter
    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter = event.value.strip().casefold()
        self._fill({str(t.id): 0 for t in self.query(DataTable)})

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        """To the first list, top down, that shows a match (the examples when none does)."""
        tables = [
            self.query_one(f"#{name}", DataTable)
            for name in ("awaiting", "examples", "keyed", "sessions")  # as on screen
        ]
        matched = [t for t in tables if t.display and t.row_count]
        (matched[0] if matched else self.query_one("#examples", DataTable)).focus()

    def on_key(self, event: Key) -> None:
        """Esc in the filter clears it (and leaves it)."""
        box = self.query_one("#filter", Input)
        if event.key == "escape" and self.focused is box:
            event.stop()
            box.value = ""
            self.query_one("#examples", DataTable).focus()

    def action_reload(self) -> None:
        self.load()

    def _selected(self) -> tuple[str, Path] | None:
        focused = self.focused
        waiting = self.shown_waiting()
        if isinstance(focused, DataTable) and focused.id == "awaiting" and waiting:
            return "awaiting", waiting[focused.cursor_row].path
        shown = self.shown_sessions()
        if isinstance(focused, DataTable) and focused.id == "sessions" and shown:
            return "session", shown[focused.cursor_row].path
        if isinstance(focused, DataTable) and focused.id == "keyed" and self._examples(False):
            return "example", self._examples(False)[focused.cursor_row].path
        ex = self.query_one("#examples", DataTable)
        if (focused is ex or focused is None) and self._examples(True):
            return "example", self._examples(True)[ex.cursor_row].path
        return None

    @on(DataTable.RowSelected)
    def selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        chosen = self._selected()
        if chosen is None:
            return
        kind, path = chosen
        # Resuming an escalated session replays its turns (no model call) and opens
        # the decide modal at its end.
        mode = {"example": "run", "awaiting": "resume"}.get(kind, "replay")
        self.post_message(SessionChosen(mode, str(path)))

    def action_resume(self) -> None:
        chosen = self._selected()
        if chosen and chosen[0] == "session":
            self.post_message(SessionChosen("resume", str(chosen[1])))

    def action_replay(self) -> None:
        chosen = self._selected()
        if chosen and chosen[0] == "session":
            self.post_message(SessionChosen("replay", str(chosen[1])))

    def action_fork(self) -> None:
        """Fork a saved session: its replay opens, to pick the turn to fork after."""
        chosen = self._selected()
        if chosen and chosen[0] in ("session", "awaiting"):
            self.notify("pick the turn (← →, g), then k forks after it", markup=False, timeout=8)
            self.post_message(SessionChosen("replay", str(chosen[1])))

    def action_new_spec(self) -> None:
        """``n``: a protocol, a file name; then as ``moot new``, the editor, a check, a run."""
        from tui.app.screens.files import NewSpecModal
        from tui.engine.protocols import PROTOCOLS

        protocols = {
            name: (protocol.__doc__ or "").strip().splitlines()[0]
            for name, protocol in PROTOCOLS.items()
        }
        self.app.push_screen(NewSpecModal(protocols, Path.cwd()), self._write_spec)

    def _write_spec(self, chosen: tuple[str, str] | None) -> None:
        from tui.app.editor import checked, edit
        from tui.engine.basics.safeio import write_new
        from tui.templates import TEMPLATES

        if chosen is None:
            return
        protocol, name = chosen
        path = Path(name) if Path(name).is_absolute() else Path.cwd() / name
        try:  # never over an existing file, never through a link: as ``moot new``
            path.parent.mkdir(parents=True, exist_ok=True)
            write_new(path, TEMPLATES[protocol].format(name=path.name).encode("utf-8"))
        except (FileRefused, OSError) as err:
            self.notify(shorten(f"{name}: {err}", 400), severity="error", markup=False)
            return
        self.notify(f"wrote {path}", markup=False)
        problem = edit(self.app, path)
        if problem is not None:
            self.notify(problem, severity="warning", markup=False, timeout=10)
        elif checked(self.app, path):
            self.post_message(SessionChosen("run", str(path)))  # the preflight, then the run

    # ------------------------------------------------- rename and delete
    def _chosen_session(self, doing: str) -> SessionRow | None:
        """The saved session under the cursor; a running one is refused, with the reason."""
        focused = self.focused
        shown = self.shown_sessions()
        if not (isinstance(focused, DataTable) and focused.id == "sessions" and shown):
            self.notify(f"pick a saved session to {doing} (Tab to the list)", markup=False)
            return None
        row = shown[focused.cursor_row]
        if self._session_running(row.path):
            self.notify(
                f"{shorten(row.path.name, 60)} is running; it cannot be {doing}d",
                severity="warning",
                markup=False,
            )
            return None
        return row

    def _session_running(self, path: Path) -> bool:
        """A debate of this app, or a moot process elsewhere, is writing the file."""
        from tui.app.app import MootApp  # the app imports this module first
        from tui.engine.record.session import held

        here = isinstance(self.app, MootApp) and self.app.holds_session(path)
        return here or held(path)

    def action_rename(self) -> None:
        from tui.app.screens.files import RenameModal

        row = self._chosen_session("rename")
        if row is None:
            return

        def renamed(name: str | None) -> None:
            if name is not None:
                self.notify(f"renamed to {shorten(name, 80)}", markup=False)
                self.load()

        self.app.push_screen(RenameModal(row.path, partial(rename_session, row.path)), renamed)

    def action_delete(self) -> None:
        from tui.app.screens.files import DeleteModal

        row = self._chosen_session("delete")
        if row is None:
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            if self._session_running(row.path):  # started while the question was up
                self.notify("it is running now; not deleted", markup=False)
                return
            try:
                row.path.unlink()  # a link is removed, never the file it points to
            except OSError as err:
                self.notify(
                    shorten(f"cannot delete {row.path.name}: {err.strerror}", 400),
                    severity="error",
                    markup=False,
                )
                return
            self.notify(f"deleted {shorten(row.path.name, 80)}", markup=False)
            self.load()

        self.app.push_screen(DeleteModal(row.path, row.title), answered)


def rename_session(path: Path, name: str) -> str | None:
    """Give a session file a new name in its folder; what is wrong with the name, or None.

    The file is moved as it is: its hash chain, signatures and ``[session].id`` do not
    name the file, so ``moot verify`` holds after. It never replaces another file.
    """
    name = name.strip()
    if not name.endswith(".toml"):
        name += ".toml"
    if "/" in name or "\\" in name or name.startswith(".") or name == ".toml":
        return f"{name!r}: a file name in the same folder, not starting with a dot"
    target = path.with_name(name)
    if target == path:
        return None
    try:
        os.link(path, target, follow_symlinks=False)  # fails if the name is taken
        path.unlink()
    except FileExistsError:
        return f"{name} exists already; pick another name"
    except OSError as err:
        return f"cannot rename to {name}: {err.strerror or err}"
    return None
