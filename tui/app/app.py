"""The moot console: a Textual app over the engine.

The app owns the theme, the screens and the exit code; each debate screen owns
its session. Slow work (the engine, model calls, listing sessions) runs in
workers that post messages; handlers on the screens and the app own all state.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.events import Event, Key, Resize
from textual.screen import Screen
from textual.theme import Theme

from tui.app.commands import MootCommands
from tui.app.messages import SessionChosen
from tui.app.screens.home import HomeScreen, SessionRow, list_sessions
from tui.app.screens.too_small import TooSmallScreen, too_small
from tui.app.themes import (
    DEFAULT_THEME,
    FALLBACK_COLORS,
    LoadedTheme,
    load_themes,
    resolve_theme_name,
)
from tui.config import load_config, save_config
from tui.exitcodes import ExitCode
from tui.plural import counted
from tui.render.textsafe import shorten

if TYPE_CHECKING:  # the engine and the debate screens load when a debate starts
    from types import ModuleType

    from tui.app.screens.debate import DebateScreen
    from tui.app.screens.live import LiveScreen
    from tui.engine.core.ports import Provider
    from tui.engine.specs.spec import Debater


class _Providers:
    """Providers by debater, from ``tui.providers.registry`` imported on first use.

    The registry (and LiteLLM behind it) is imported only when a debate asks for
    a model, never on the console's start-up path.
    """

    def __init__(self) -> None:
        self.registry: ModuleType | None = None
        self._looked = False
        self._scripted: Provider | None = None

    def _registry(self) -> ModuleType | None:
        if not self._looked:
            self._looked = True
            try:
                from tui.providers import registry
            except ImportError:
                return None
            self.registry = registry
        return self.registry

    def __call__(self, debater: Debater) -> Provider:
        if debater.model == "scripted":  # the console's own: its tokens stream at their pace
            if self._scripted is None:
                from tui.providers.scripted import ScriptedProvider

                self._scripted = ScriptedProvider(paced=True)
            return self._scripted
        registry = self._registry()
        if registry is not None:
            provider: Provider = registry.provider_for(debater)
            return provider
        from tui.engine.core.ports import ProviderError

        raise ProviderError("not_found", f"no provider available for model {debater.model!r}")

    async def close(self) -> None:
        if self.registry is not None:
            await self.registry.close_all()


class MootApp(App[int]):
    CSS_PATH = "moot.tcss"
    TITLE = "moot"
    COMMANDS = App.COMMANDS | {MootCommands}
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Interrupt", show=False, priority=True),
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Keys"),
    ]

    def __init__(
        self,
        *,
        spec_path: str | None = None,
        resume_path: str | None = None,
        replay_path: str | None = None,
        theme: str | None = None,
        sessions_dir: str | Path | None = None,
        examples_dir: str | Path | None = None,
        out: str | Path | None = None,
        provider_for: Callable[[Debater], Provider] | None = None,
        replay_start: int = 0,
        replay_speed: float = 1.0,
        preflight: bool = False,
        force_resume: bool = False,
        allow_read: Sequence[str] = (),
        allow_tools: bool = False,
        allow_tool_writes: bool = False,
    ) -> None:
        super().__init__()
        self.spec_path = spec_path
        self.resume_path = resume_path
        self.force_resume = force_resume  # --force: the command line's session only
        self.replay_path = replay_path
        self.requested_theme = theme
        # As tui.engine.record.session.sessions_dir, without importing the engine at start-up.
        self.sessions_path = Path(sessions_dir or os.environ.get("MOOT_SESSIONS_DIR") or "sessions")
        if examples_dir is None:
            from tui.paths import examples_dir as shipped_examples

            examples_dir = shipped_examples()
        self.examples_path = Path(examples_dir)
        self.out = out
        self._own_providers = provider_for is None
        self.providers = provider_for or _Providers()
        self.replay_start = replay_start
        self.replay_speed = replay_speed
        self.preflight = preflight  # check a run's models before its session file exists
        self.allow_read = tuple(allow_read)  # --allow-read: the command line's spec only
        self.allow_tools = allow_tools  # --allow-tools: the command line's spec or session only
        self.allow_tool_writes = allow_tool_writes  # --allow-tool-writes: likewise
        self.runs: list[LiveScreen] = []  # every live debate opened here, oldest first
        self.startup_error: str | None = None
        self.moot_themes: dict[str, LoadedTheme] = {}
        self.shown_theme = ""
        self.farewell: list[str] = []  # printed once the app has left the terminal
        self._shutting_down = False
        self._theme_warning = self._start_theme()

    # -------------------------------------------------------------- themes
    def _start_theme(self) -> str | None:
        """Register moot's themes and start in the chosen one before Textual first reads the
        stylesheet; the warning to show once mounted, if any.

        Set in ``on_mount``, the theme made Textual parse every rule again and restyle every
        widget, a tenth of opening the console. So the theme's watcher is skipped and its
        work done here, less the reparse it schedules: nothing is parsed yet.
        """
        self.moot_themes, _ = load_themes(quick=True)  # validate_themes reports problems
        for loaded in self.moot_themes.values():
            self.register_theme(loaded.theme)
        wanted = self.requested_theme or str(load_config().get("theme") or DEFAULT_THEME)
        name = resolve_theme_name(wanted, self.moot_themes, set(self.available_themes))
        warning = None
        if name is None:
            if self.requested_theme:
                warning = f"unknown theme {shorten(wanted, 40)}; using the default"
            name = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.set_reactive(App.theme, name)  # --theme is for this run: saved only on a switch
        dark = self.current_theme.dark
        self.set_class(dark, "-dark-mode", update=False)
        self.set_class(not dark, "-light-mode", update=False)
        self.set_class(True, f"-theme-{name}", update=False)
        self._refresh_truecolor_filter(self.ansi_theme)
        self.stylesheet.set_variables(self.get_css_variables())
        self.shown_theme = name
        return warning

    def _setup_themes(self) -> None:
        if self._theme_warning:
            self.notify(self._theme_warning, severity="warning", markup=False)
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.validate_themes()

    @work(thread=True, exclusive=True, group="themes")
    def validate_themes(self) -> None:
        """Full (pydantic) validation of every theme file, after the first paint."""
        themes, problems = load_themes()
        self.call_from_thread(self._themes_validated, themes, problems)

    def _themes_validated(self, themes: dict[str, LoadedTheme], problems: list[str]) -> None:
        for name in list(self.moot_themes):
            if name not in themes and name != self.theme:
                self.moot_themes.pop(name)
        for problem in problems:
            self.notify(f"theme skipped: {shorten(problem, 200)}", severity="warning", markup=False)

    def _theme_changed(self, theme: Theme) -> None:
        """The user switched theme (palette or command): remembered for the next launch."""
        if theme.name != self.shown_theme:
            self.shown_theme = theme.name
            save_config({"theme": theme.name})

    def moot_theme_names(self) -> list[str]:
        return sorted(self.moot_themes)

    def switch_theme(self, name: str) -> bool:
        resolved = resolve_theme_name(name, self.moot_themes, set(self.available_themes))
        if resolved is None:
            self.notify(f"unknown theme {shorten(name, 40)}", severity="warning", markup=False)
            return False
        self.theme = resolved
        return True

    def debater_colors(self) -> tuple[str, ...]:
        loaded = self.moot_themes.get(self.theme)
        if loaded is not None:
            return loaded.debater_colors
        t = self.current_theme
        colors = tuple(
            c for c in (t.primary, t.secondary, t.accent, t.success, t.warning, t.error) if c
        )
        return colors or FALLBACK_COLORS

    async def on_event(self, event: Event) -> None:
        """A key still on its way (typed ahead of a quit, or bubbling back from the screen)
        when the last screen has gone is dropped: Textual would look for a screen to bind
        it and end the closing app with a traceback."""
        if isinstance(event, Key) and not self.screen_stack:
            return
        await super().on_event(event)

    # -------------------------------------------------------------- start-up
    def on_mount(self) -> None:
        self._setup_themes()
        if self.spec_path:
            self.open_run_at_start(self.spec_path)
        elif self.resume_path:
            self.open_path("resume", self.resume_path, startup=True)
        elif self.replay_path:
            self.open_path("replay", self.replay_path, startup=True)
        else:
            self.push_screen(HomeScreen(self.examples_path, self.sessions_path))
        self.call_after_refresh(lambda: self.fit_terminal(*self.size))
        if not (self.is_headless or self.is_web):  # a terminal's console: moot's own process
            self._interrupt_on_sigterm()

    def _interrupt_on_sigterm(self) -> None:
        """SIGTERM leaves as Ctrl+C does (saved, the way back printed, exit 130); it killed
        the console outright, the terminal left raw."""
        import asyncio
        import signal

        with contextlib.suppress(NotImplementedError):  # Windows has no SIGTERM handler
            asyncio.get_running_loop().add_signal_handler(
                signal.SIGTERM, lambda: self.call_later(self.action_interrupt)
            )

    def open_run_at_start(self, path: str) -> None:
        """``moot run``: the title on screen first, then the engine (in a worker)."""
        from tui.app.screens.opening import OpeningScreen

        self.push_screen(OpeningScreen(path))
        self._prepare_run(path)

    @work(thread=True, exclusive=True, group="opening")
    def _prepare_run(self, path: str) -> None:
        from tui.app.screens.opening import start_check

        problem, routes = start_check(path, self.preflight, self.allow_read)
        try:
            self.call_from_thread(self._run_prepared, path, problem, routes)
        except RuntimeError:  # the app has quit meanwhile
            pass

    def _run_prepared(self, path: str, problem: str | None, routes: list[str]) -> None:
        from tui.app.screens.opening import OpeningScreen

        if problem is not None:
            self.startup_error = problem
            self.exit(ExitCode.BAD_INPUT)
            return
        while isinstance(self.screen, TooSmallScreen):  # put back once the debate is up
            self.pop_screen()
        if isinstance(self.screen, OpeningScreen):
            self.pop_screen()
        self.open_path("run", path, startup=True)
        for line in routes:  # what leaves the machine, said as the debate opens
            self.notify(shorten(line, 600), title="files sent", markup=False, timeout=20)
        self.call_after_refresh(lambda: self.fit_terminal(*self.size))

    def on_resize(self, event: Resize) -> None:
        if self.screen_stack[1:]:  # the first screen is up: the start-up check has run
            self.fit_terminal(*event.size)  # before Textual's own handler records the size

    def fit_terminal(self, width: int, height: int) -> None:
        """Below the minimum size a message covers every screen until the terminal grows."""
        small = too_small(width, height)
        covering = [s for s in self.screen_stack if isinstance(s, TooSmallScreen)]
        if small and not covering:
            self.push_screen(TooSmallScreen())
        elif small:
            covering[-1].show(width, height)
        elif covering and self.screen is covering[-1]:
            self.pop_screen()

    def fail_start(self, message: str) -> None:
        """A spec or session that cannot be opened: a message, exit code 2 at start-up."""
        shown = [s for s in self.screen_stack if not isinstance(s, TooSmallScreen)]
        if len(shown) <= 2 and not any(isinstance(s, HomeScreen) for s in shown):
            self.startup_error = message
            self.exit(ExitCode.BAD_INPUT)
            return
        self.notify(shorten(message, 600), severity="error", markup=False, timeout=15)
        failed = self.debate_screen()  # the newest: the one that could not open its file
        while isinstance(self.screen, TooSmallScreen):  # put back over what is left
            self.pop_screen()
        if failed is not None and self.screen is failed:
            self.pop_screen()
        self.call_after_refresh(lambda: self.fit_terminal(*self.size))

    def open_path(self, mode: str, path: str, *, startup: bool = False) -> None:
        from tui.app.screens.live import LiveScreen
        from tui.app.screens.replay import ReplayScreen
        from tui.engine.basics.errors import SessionError, SpecError
        from tui.engine.record.session import load_session
        from tui.engine.specs.spec import read_spec_file

        if not startup:
            self._leave_debate()
        try:
            if mode == "run":
                spec, raw = read_spec_file(path, self.allow_read if startup else ())
                screen: DebateScreen = LiveScreen(
                    spec,
                    raw,
                    self.providers,
                    out=self.out if startup else None,
                    sessions_dir=self.sessions_path,
                    spec_source=str(path),
                    allow_tools=self.allow_tools and startup,
                    writes=self.allow_tool_writes and startup,
                )
            elif mode == "resume":
                data = load_session(path)
                screen = LiveScreen(
                    data.spec,
                    data.spec_raw,
                    self.providers,
                    resume_path=path,
                    sessions_dir=self.sessions_path,
                    force=self.force_resume and startup,
                    allow_tools=self.allow_tools and startup,
                    writes=self.allow_tool_writes and startup,
                )
            else:
                data = load_session(path)
                for warning in data.warnings:  # a torn tail was dropped: say what
                    self.notify(shorten(warning, 600), severity="warning", markup=False)
                start = self.replay_start if startup else 0
                screen = ReplayScreen(data, start_at=start, speed=self.replay_speed)
        except (SpecError, SessionError) as err:
            problems = "; ".join(err.problems) if err.problems else str(err)
            if startup:
                self.startup_error = f"{path}: {problems}"
                self.exit(ExitCode.BAD_INPUT)
            else:
                self.notify(
                    shorten(f"{path}: {problems}", 600), severity="error", markup=False, timeout=15
                )
            return
        if isinstance(screen, LiveScreen):
            self.runs.append(screen)
        self.push_screen(screen)
        if not startup:  # leaving home took the size message down with it
            self.call_after_refresh(lambda: self.fit_terminal(*self.size))

    def on_session_chosen(self, message: SessionChosen) -> None:
        if message.mode == "run":  # as ``moot run``: the preflight before any file is written
            from tui.app.screens.modals import PreflightWaitModal

            waiting = PreflightWaitModal(Path(message.path).name)
            self.push_screen(waiting)
            self._check_then_run(message.path, waiting)
        else:
            self.open_path(message.mode, message.path)

    @work(thread=True, exclusive=True, group="opening")
    def _check_then_run(self, path: str, waiting: Screen[None]) -> None:
        from tui.app.screens.opening import preflight_lines

        lines = preflight_lines(path)
        try:
            self.call_from_thread(self._checked, path, lines, waiting)
        except RuntimeError:  # the app has quit meanwhile
            pass

    def _checked(self, path: str, lines: list[str], waiting: Screen[None]) -> None:
        """The check's result takes the place of its waiting screen; none if the operator
        stopped waiting (Esc), so a late result never opens over what they did since."""
        from tui.app.screens.modals import PreflightModal

        if waiting not in self.screen_stack:
            return
        waiting.pop_until_active()
        self.pop_screen()
        if lines:
            self.push_screen(PreflightModal(Path(path).name, lines))
        else:
            self.open_path("run", path)

    # ------------------------------------------------------------ navigation
    def debate_screen(self) -> DebateScreen | None:
        """The topmost debate screen (its module loads with the first debate)."""
        from tui.app.screens.debate import DebateScreen

        for screen in reversed(self.screen_stack):
            if isinstance(screen, DebateScreen):
                return screen
        return None

    def current_session_path(self) -> Path | None:
        screen = self.debate_screen()
        return None if screen is None else screen.session_path

    def _leave_debate(self) -> None:
        from tui.app.screens.debate import DebateScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, HomeScreen):
            screen = self.screen
            if isinstance(screen, DebateScreen):
                screen.close_session()
            self.pop_screen()

    def go_home(self) -> None:
        self._leave_debate()
        if not isinstance(self.screen, HomeScreen):
            self.push_screen(HomeScreen(self.examples_path, self.sessions_path))
        else:
            self.screen.load()

    def recent_sessions(self, n: int) -> list[SessionRow]:
        return list_sessions(self.sessions_path)[:n]

    def export(self, fmt: str) -> None:
        path = self.current_session_path()
        if path is None:
            self.notify("no session to export", markup=False)
            return
        self._export(path, fmt)

    @work(thread=True, group="export")
    def _export(self, path: Path, fmt: str) -> None:
        """In a thread: the export re-runs ``moot verify``, which runs the rules on an event
        loop of its own (on the app's loop it failed, and every export said "tampered")."""
        from tui.engine.basics.errors import SessionError
        from tui.render.beside import write_beside

        try:
            out = write_beside(path, fmt)
        except (SessionError, OSError) as err:
            message, severity = shorten(f"export failed: {err}", 400), "error"
        else:
            message, severity = f"exported {out}", "information"
        self.call_from_thread(self.notify, message, severity=severity, markup=False, timeout=10)

    def copy_transcript(self) -> None:
        """The palette's "Copy transcript": every turn of the debate shown, as plain text."""
        from tui.app.copying import transcript_text

        screen = self.debate_screen()
        if screen is None or not screen.turns:
            self.notify("no turns to copy yet", markup=False)
            return
        self.copy_to_clipboard(transcript_text(screen.spec, screen.turns, screen.actions))
        self.notify(f"copied the transcript ({counted(len(screen.turns), 'turn')})", markup=False)

    # ------------------------------------------------------------------ quit
    def exit_code(self) -> int:
        """The latest debate that ran here decides it; none ran: 0 (nothing to decide)."""
        started = [run for run in self.runs if run.engine is not None]
        return started[-1].exit_code() if started else ExitCode.DECIDED

    def running_debate(self) -> LiveScreen | None:
        """The live debate still running here (quitting would interrupt it), if any."""
        for run in reversed(self.runs):
            if run.session is not None and run.exit_code() == ExitCode.INTERRUPTED:
                return run
        return None

    def holds_session(self, path: Path) -> bool:
        """Whether a debate of this app holds ``path`` open (it is written to, so it stays)."""
        wanted = path.resolve()
        return any(
            run.session is not None and run.path is not None and run.path.resolve() == wanted
            for run in self.runs
        )

    def opened_from_home(self) -> bool:
        """A debate or replay is shown over the home screen (Esc goes back there)."""
        return self.debate_screen() is not None and any(
            isinstance(s, HomeScreen) for s in self.screen_stack
        )

    async def action_quit(self) -> None:
        """Quit, asking first when a debate is running or was opened from home."""
        from tui.app.screens.modals import ConfirmModal, GuardModal

        if isinstance(self.screen, ConfirmModal | GuardModal):  # a typed q must not stack a quit
            return
        running = self.running_debate()
        if running is not None:
            question = "The debate is still running. Quit?"
            detail = resume_hint(running.path)
        elif self.opened_from_home():
            question, detail = "Quit moot?", "Esc goes back to the home screen instead."
        else:
            await self.shut_down()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.call_later(self.shut_down)

        self.push_screen(ConfirmModal(question, detail), answered)

    def action_help(self) -> None:
        from tui.app.screens.help import HelpScreen, describe

        if not isinstance(self.screen, HelpScreen):
            keys = describe(self.screen.active_bindings, self.get_key_display)
            self.push_screen(HelpScreen(keys))

    async def action_interrupt(self) -> None:
        """Ctrl+C, as the README's key table says: saved already, the resume line printed, exit 130."""
        await self.shut_down(ExitCode.INTERRUPTED)

    async def shut_down(self, code: int | None = None) -> None:
        """Every completed turn and action is already in the session file; say where.
        Once: a second yes typed ahead into the quit question asks for it again."""
        if self._shutting_down:
            return
        self._shutting_down = True
        code = self.exit_code() if code is None else code
        for run in self.runs:
            if run.path is not None:
                self.farewell.append(f"moot: session saved in {run.path}")
                if run.exit_code() != ExitCode.DECIDED:
                    self.farewell.append(f"moot: continue it with: {resume_command(run.path)}")
            run.close_session()
        if self._own_providers and isinstance(self.providers, _Providers):
            try:
                await self.providers.close()
            except Exception:  # closing must never block quitting
                pass
        self.exit(code)


def resume_command(path: Path) -> str:
    """The exact shell line that continues a session."""
    return f"moot resume {shlex.quote(str(path))}"


def resume_hint(path: Path | None) -> str:
    if path is None:
        return "Nothing has been saved yet."
    return f"Saved in {path}. Continue later with: {resume_command(path)}"
