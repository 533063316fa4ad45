"""The panes' widgets, mounted when first needed: the first frame's pane at once, the others right after it."""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches

from inductor_step.tui.compat import Panes
from inductor_step.tui.panes import NUMERICS, PANES, pane_class


class PaneMounter:
    """Mounts the app's panes (:data:`inductor_step.tui.panes.PANES`, pane 0 in a torchrun job, the
    numerics pane) into their tabs, importing each pane's module on first use.  The app composes every
    tab and the pane its first frame shows (:class:`inductor_step.tui.compat.Panes` mounts the other tabs' panes
    when first needed); :meth:`mount_all` mounts the rest once that frame is on
    screen, :meth:`pane` any one at once (its table and code view come when it ``is_mounted``)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._mounting: dict[str, Any] = {}  # stage -> the mount of its pane, until awaited

    def specs(self) -> list[Any]:
        """Every pane's :class:`inductor_step.tui.panes.PaneSpec` (or class), in tab order."""
        return [*PANES, *self.app.jobs.job_panes(), NUMERICS]

    def pane(self, stage: str) -> Any:
        """Pane ``stage``'s widget, mounted now if it was not yet.  Raises StopIteration for an unknown stage."""
        try:
            return self.app.query_one(f"#stage-{stage}")
        except NoMatches:
            spec = next(p for p in self.specs() if p.stage == stage)
            widget = pane_class(spec)()
            panes = self.app.query_one("#panes", Panes)
            if panes.is_attached:  # not while the app closes
                self._mounting[stage] = panes.tab_pane(f"pane-{stage}").mount(widget)
            return widget

    async def mount_all(self) -> None:
        """Mount every pane not mounted yet and wait until they are (the app's keys wait meanwhile)."""
        for spec in self.specs():
            self.pane(spec.stage)
        for stage in list(self._mounting):
            mounting = self._mounting.pop(stage, None)
            if mounting is not None:
                await mounting

    async def refresh_when_mounted(self, force: bool) -> None:
        """A key before the panes were mounted: the app's refresh once they are."""
        await self.mount_all()
        self.app.refresh_all(force=force)
