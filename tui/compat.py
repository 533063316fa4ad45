"""Every use of Textual's private API, in one place (as ``tracer/adapter/`` holds torch's).

Each workaround says what it fixes and what was measured; a new Textual that breaks one breaks it
here, and each degrades to Textual's own behaviour when the private name is gone.  Pinned:
textual==8.2.8 (pyproject.toml).  Measurements: BENCHMARKS.md (b), "key latency".
"""

from __future__ import annotations

import functools
from typing import Any

from textual import on
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Footer, TabbedContent, TabPane, Tabs

try:  # private modules: the tab bar of TabbedContent, the tab of a pane and the tab bar's underline
    from textual.widgets._tabbed_content import ContentTab, ContentTabs
    from textual.widgets._tabs import Underline
except ImportError:  # pragma: no cover - a Textual without them: the underline moves a frame later, every pane composed
    ContentTab = ContentTabs = Underline = None  # type: ignore[assignment,misc]


# Containers whose every cell is drawn over by their children: Textual's private ``BLANK`` draws them
# as blank lines of their background instead of through the CSS renderer line by line.  A pane
# switch repaints them all: 200-250 lines, 8-12 ms of the 182 MB session's ``n`` before.
class BlankHorizontal(Horizontal):
    BLANK = True


class BlankVertical(Vertical):
    BLANK = True


class BlankTabPane(TabPane):
    BLANK = True


class MainScreen(Screen):
    """The app's screen.  Besides ``BLANK``: Screen's ``focused`` repaints the whole screen when it
    changes, a second full frame (~23 KB at 160x50) right after every pane switch; what focus changes
    is restyled by the widgets themselves, so here it repaints nothing.  Its first resume does not
    restyle the widgets that were styled as they mounted (:meth:`_on_screen_resume`)."""

    BLANK = True
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    _resumed = False

    def _on_screen_resume(self, event: Any) -> None:
        # Textual's handler (Screen's, called after this one) applies the CSS again to every widget of a resumed
        # screen.  On the first resume the screen's widgets were styled as they mounted, a moment before, and
        # every class change since restyled its own: that second pass (about 60 rule matchings) cost ~10 ms of the
        # first frame.  Later resumes (a dialog closed) restyle as Textual does.  Reads ``refresh_styles``.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False


class Panes(TabbedContent):
    """TabbedContent whose pane changes only when the app says so or the user clicks a tab.

    TabbedContent also activates the pane of any widget that gets focus (its private
    ``_on_tab_pane_focused``); our focus calls are queued, so with keys pressed quickly a late one
    pulled the view back to the previous stage.  ``clicked`` is the pane id of the last click on a
    tab (from its private ``_on_tabs_tab_activated``), for :meth:`_tab_clicked`.

    ``tabs``: (title, pane id) of every pane, in tab order.  Every tab is in the first frame; of the panes, only
    those composed inside (the one the first frame shows): the others are mounted (hidden) when first needed,
    :meth:`tab_pane`.  Thirteen hidden panes styled and mounted before the first frame cost ~4 ms of it.  The tab
    bar itself is a picture in the first frame (:func:`tabs_picture`), TabbedContent's tabs right after it
    (:meth:`tabs_after_picture`).  Reads TabbedContent's private ``ContentTabs`` and ``_watch_active`` (where
    ContentTabs is gone, every pane is composed, empty, as before).
    """

    clicked: str | None = None
    BLANK = True

    def __init__(self, tabs: list[tuple[str, str]], initial: str, id: str | None = None) -> None:
        super().__init__(initial=initial, id=id)
        self._tabs = list(tabs)
        self._first_id = initial
        self._composed: list[Widget] = []
        self._hidden: set[str] = set()  # pane ids whose tabs are hidden
        self.pictured = False  # the first frame's tab bar is a picture (tabs_picture) until tabs_after_picture

    def compose_add_child(self, widget: Widget) -> None:
        """The panes composed inside (``with Panes(...): with BlankTabPane(...)``): the first frame's."""
        self._composed.append(widget)

    def compose(self) -> Any:
        composed = {w.id: w for w in self._composed}
        if ContentTabs is None:  # pragma: no cover - TabbedContent's own compose, over every pane
            for title, pane_id in self._tabs:
                super().compose_add_child(composed.get(pane_id) or BlankTabPane(title, id=pane_id))
            yield from super().compose()
            return
        if self.app.ansi_color:  # pragma: no cover - the picture draws the default (truecolor) look only
            yield self._content_tabs(self._first_id)
        else:  # the first frame's tab bar: one picture of the tabs and the underline, the tabs right after it
            self.pictured = True
            bar = BlankVertical(tabs_picture(self), Underline(), classes="-tabs-picture-bar")
            bar.styles.dock, bar.styles.height = "top", 2  # where ContentTabs goes (TabbedContent's CSS)
            yield bar
            self.call_after_refresh(self.tabs_after_picture)
        with ContentSwitcher(initial=self._first_id):
            yield from self._composed

    def _content_tabs(self, active: str) -> Any:
        """TabbedContent's tab bar with ``active`` (a pane id) active.  Tabs activates that tab when mounted
        (Tabs.TabActivated), which TabbedContent takes for a click: with ``n`` pressed before the bar replaced
        the first frame's picture, that "click" took the view back to the first frame's pane (a lost key, one
        start in three in tmux).  Constructed with the message prevented, which Textual applies to the new
        widget's Mount handler; a real click later still activates."""
        with self.prevent(Tabs.TabActivated):
            tabs = [ContentTab(title, pane_id) for title, pane_id in self._tabs]
            for tab, (_, pane_id) in zip(tabs, self._tabs):
                if pane_id in self._hidden:  # hidden while the picture stood (Tabs.hide's class)
                    tab.add_class("-hidden", update=False)
            return ContentTabs(*tabs, active=active or None, tabbed_content=self)

    def shown_tabs(self) -> list[tuple[str, str]]:
        """(title, pane id) of the tabs on the bar (not hidden), in order."""
        return [(t, i) for t, i in self._tabs if i not in self._hidden]

    @property
    def shown_pane(self) -> str:
        """The id of the pane shown: the active one, or before any was made active the first frame's."""
        return self.active or self._first_id

    async def tabs_after_picture(self) -> None:
        """The first frame's picture of the tab bar becomes TabbedContent's tabs (ContentTabs), drawn the same: one
        batch, so no frame shows neither or both."""
        if not self.pictured or not self.is_attached:
            return
        old = list(self.query_children(".-tabs-picture-bar"))
        tabs = self._content_tabs(self.shown_pane)
        tabs.can_focus = False  # (on_mount's, for the tabs composed at once)
        with self.app.batch_update():
            await self.mount(tabs, before=self.query_one(ContentSwitcher))
            self.pictured = False
            for w in old:
                await w.remove()
            self.place_underline(self.shown_pane)

    def hide_tab(self, tab_id: str) -> None:  # noqa: D102 - TabbedContent's; in the picture too
        self._hidden.add(tab_id)
        if self.pictured:
            self.query_one(".-tabs-picture").refresh(layout=True)
        else:
            super().hide_tab(tab_id)

    def show_tab(self, tab_id: str) -> None:  # noqa: D102 - TabbedContent's; in the picture too
        self._hidden.discard(tab_id)
        if self.pictured:
            self.query_one(".-tabs-picture").refresh(layout=True)
        else:
            super().show_tab(tab_id)

    def _watch_active(self, active: str) -> None:
        # TabbedContent's sets its ContentTabs' active tab: the picture shows it (no tab was clicked: no message)
        if self.pictured:
            self.query_one(ContentSwitcher).current = active
            self.query_one(".-tabs-picture").refresh()
            return
        super()._watch_active(active)

    def tab_pane(self, pane_id: str) -> TabPane:
        """Pane ``pane_id`` (a BlankTabPane), mounted now, empty and hidden, when it was not composed.
        Raises KeyError for an id that has no tab."""
        switcher = self.query_one(ContentSwitcher)
        try:
            return switcher.get_child_by_id(pane_id, TabPane)
        except NoMatches:
            pane = BlankTabPane(dict((i, t) for t, i in self._tabs)[pane_id], id=pane_id)
            pane.display = False
            switcher.mount(pane)
            return pane

    def on_mount(self) -> None:
        # TabbedContent makes its ContentSwitcher itself: blank by instance
        for switcher in self.query_children(ContentSwitcher):
            switcher.BLANK = True
        # the tab bar takes no focus: tab stopped there, where the arrows did nothing a person expected
        # (the number keys switch panes; a click on a tab still does)
        for tabs in self.query(Tabs):
            tabs.can_focus = False
        # a pane whose class says HIDE_TAB (pane T, compile time) is reached by its key, its tab kept off the bar
        for pane in self.query(TabPane):
            if any(getattr(c, "HIDE_TAB", False) for c in pane.children) and pane.id:
                self.hide_tab(pane.id)

    def _on_tab_pane_focused(self, event: Any) -> None:
        event.stop()

    def _on_tabs_tab_activated(self, event: Any) -> None:
        tab_id = getattr(getattr(event, "tab", None), "id", None) or ""
        self.clicked = (ContentTab.sans_prefix(tab_id) if ContentTab is not None else tab_id) if tab_id else None
        if self.clicked:  # a click before its pane was mounted: the switcher needs it there
            self.tab_pane(self.clicked)
        super()._on_tabs_tab_activated(event)

    @on(TabbedContent.TabActivated)
    def _tab_clicked(self, event: TabbedContent.TabActivated) -> None:
        """A click on a tab: that stage's pane (the app's ``action_stage``); the echo of the app's own switch
        changes nothing."""
        if event.pane.id != self.clicked:
            return
        self.clicked = None
        stage = (event.pane.id or "").removeprefix("pane-")
        if stage and stage != self.app.view.stage:
            self.app.action_stage(stage)

    def place_underline(self, pane_id: str) -> None:
        """Put the tab bar's underline under ``pane_id``'s tab now.  Textual's ``Tabs`` moves it after
        the next refresh, which painted it in a second frame 40-60 ms after the pane; the tabs never
        move, so where it goes is known already (Textual's own computation; before the first layout,
        the tabs' label widths and gutters in a row from column 0, as that layout places them).  Reads
        the private ``ContentTab`` and ``Underline``."""
        if ContentTab is None:
            return
        if self.pictured:  # the picture's tabs, as its row places them (tabs_picture)
            picture = self.query_one(".-tabs-picture")
            start = picture.styles.gutter.left
            for title, shown_id in self.shown_tabs():
                width = len(title)
                if shown_id == pane_id:
                    underline = self.query_one(Underline)
                    underline.show_highlight = True
                    underline.highlight_start, underline.highlight_end = start, start + width
                    return
                start += width + picture.styles.gutter.width
            return
        try:
            tab = self.query_one(f"#--content-tab-{pane_id}", ContentTab)
            underline = self.query_one(Underline)
        except NoMatches:
            return
        region = tab.virtual_region.shrink(tab.styles.gutter)
        if region.width:
            underline.show_highlight = True
            underline.highlight_start, underline.highlight_end = region.column_span
        elif not tab.virtual_region:  # before the first layout: where that layout will put it
            start = 0
            for t in self.query(ContentTab):  # in a row from column 0, each as wide as its label
                width = t.get_content_width(self.app.size, self.app.size)
                if t is tab:
                    underline.show_highlight = True
                    start += t.styles.gutter.left
                    underline.highlight_start, underline.highlight_end = start, start + width
                    return
                if t.display:
                    start += width + t.styles.gutter.width + t.styles.margin.width


def lazy_module(name: str) -> Any:
    """Module ``name``, imported when one of its attributes is first read (``importlib.util.LazyLoader``):
    for the app's modules that the first frame does not use.  Raises ModuleNotFoundError at once when
    there is no such module."""
    import importlib.util  # noqa: PLC0415
    import sys  # noqa: PLC0415

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: the footer's keys by their action, those a narrow footer keeps first: quit, help, next, the panes (``1-9 panes``),
#: screenshot (how bug reports are filed: on every pane at 80 columns), then a pane's own keys (6's ``t``/``x``),
#: run, search before graphs, back and report
FOOTER_PRIORITY = ("quit_app", "help", "next_stop", "stage", "screenshot", "run", "search", "pick_graph",
                   "prev_stop", "report")


def tabs_picture(panes: Panes) -> Any:
    """One widget that draws ``panes``' tab row as its tabs (ContentTabs' ContentTab widgets) draw it: a Tab itself
    (Tab's CSS, app.tcss' narrower padding below 100 columns included, styles it as it styles each tab), whose text
    is each shown tab's title, the active one in the active tab's colour, the tabs' padding between them.  The
    first frame's, over a real Underline (:meth:`Panes.place_underline` places it): fourteen tabs and their four
    containers styled, mounted and drawn cost ~11 ms of it.  Draws, nothing more."""
    return _tabs_picture_class()(panes)


@functools.cache
def _tabs_picture_class() -> type:
    from rich.text import Text  # noqa: PLC0415
    from textual.widgets import Tab  # noqa: PLC0415

    class TabsPicture(Tab):
        COMPONENT_CLASSES = {"tabs-picture--active"}
        DEFAULT_CSS = "TabsPicture > .tabs-picture--active { color: $foreground; }"  # Tab.-active's

        def __init__(self, panes: Panes) -> None:
            super().__init__("", classes="-tabs-picture")
            self.panes = panes

        def render(self) -> Text:
            active = self.get_component_rich_style("tabs-picture--active")
            pad = self.styles.padding
            out = Text(no_wrap=True, end="")
            for i, (title, pane_id) in enumerate(self.panes.shown_tabs()):
                if i:
                    out.append(" " * (pad.right + pad.left))
                out.append(title, active if pane_id == self.panes.shown_pane else "")
            return out

    return TabsPicture


def footer_picture(keys: list[Any]) -> Any:
    """One widget that draws Footer's ``keys`` (FooterKeys, not mounted) as they draw themselves, side by side:
    a FooterKey itself (so Footer's and FooterKey's CSS style it as they style a key), whose text is each key's
    (:meth:`FooterKey.render`'s, with the component styles of its key and description) and the key's right margin
    between them in the footer's own style.  The first frame's (:class:`SteadyFooter`): nine keys styled, laid
    out and drawn one by one cost ~3-7 ms of it.  Draws, nothing more: no hover, tooltip or click of its own."""
    return _picture_class()(keys)


@functools.cache
def _picture_class() -> type:
    from rich.text import Text  # noqa: PLC0415
    from textual.widgets._footer import FooterKey  # noqa: PLC0415 - Footer's own key widget

    class FooterPicture(FooterKey):
        def __init__(self, keys: list[Any]) -> None:
            super().__init__("", "", "", "", classes="-compact" if keys and keys[0].has_class("-compact") else "")
            self.keys = keys

        def render(self) -> Text:
            key_style = self.get_component_rich_style("footer-key--key")
            description_style = self.get_component_rich_style("footer-key--description")
            kp = self.get_component_styles("footer-key--key").padding
            dp = self.get_component_styles("footer-key--description").padding
            gap = Text(" " * self.styles.margin.right, self.parent.rich_style if isinstance(self.parent, Widget)
                       else "")
            out = Text(no_wrap=True)
            for i, k in enumerate(self.keys):
                label = Text.assemble((" " * kp.left + k.key_display + " " * kp.right, key_style))
                if k.description:
                    label.append(" " * dp.left + k.description + " " * dp.right, description_style)
                label.stylize_before(self.rich_style)
                if i:
                    out.append_text(gap)
                out.append_text(label)
            return out

    return FooterPicture


class SteadyFooter(Footer):
    """Textual's Footer, rebuilt only when the keys it shows change.

    Footer recomposes (new FooterKey widgets, CSS applied to each) on every ``bindings_updated``
    signal, which fires on each focus change: each pane switch and stop step.  Measured with py-spy on
    the 182 MB session, that was about a quarter of a key's time.  Reads Footer's private
    ``_bindings_ready``.  Its first keys are drawn by one widget (:func:`footer_picture`, the palette's key
    excepted) and become keys of their own right after the first frame, drawn the same.
    """

    _shown: tuple | None = None
    _width: int = 0
    _pictured = False  # the first keys were drawn as one picture

    def compose(self) -> Any:
        """Footer's keys, those that fit, in their order: where not all fit, the first of :data:`FOOTER_PRIORITY`
        (a pane's own keys, 6's ``t``/``x``, right after ``s``) keep their place and the others give way (at 80
        columns pane 6's ``t IR/asm x Repro`` pushed ``/ Search``, ``r Run`` and ``s Shot`` off the row's end);
        the keys that would run under the docked ``^p palette`` are left out (an overflowing row put the docked
        key one cell off: ``^p palettep`` at 80 columns, ``^p palett`` at 200)."""
        from textual.widgets._footer import FooterKey  # noqa: PLC0415 - Footer's own key widget

        items = list(super().compose())
        width = self.size.width or self.app.size.width or 80
        self._width = width
        palette = [w for w in items if isinstance(w, FooterKey) and w.has_class("-command-palette")]
        room = width - sum(2 + len(w.key_display) + len(w.description) for w in palette)
        keys = [w for w in items if isinstance(w, FooterKey) and w not in palette]

        def need(w: Any) -> int:
            return len(w.key_display) + (1 + len(w.description) if w.description else 0) + 1

        def rank(w: Any) -> float:
            action = w.action.split("(")[0]
            if action in FOOTER_PRIORITY:
                return FOOTER_PRIORITY.index(action)
            return FOOTER_PRIORITY.index("screenshot") + 0.5  # a pane's own key
        kept: set[int] = set()
        used = 0
        for w in sorted(keys, key=rank):  # (sorted is stable: equal ranks in the footer's order)
            if used + need(w) <= room:
                kept.add(id(w))
                used += need(w)
        for w in items:
            if isinstance(w, FooterKey) and self.compact:
                # FooterKey's compact watcher adds this class once mounted, and the class change applied the
                # CSS to each key a second time (3 rule matchings a key, ~5 ms of the first frame); present
                # from the start, the watcher finds it there and does nothing
                w.add_class("-compact", update=False)
        shown = [w for w in items if w not in palette and not (isinstance(w, FooterKey) and id(w) not in kept)]
        if not self._pictured and shown and all(type(w) is FooterKey and not w.has_class("-disabled") for w in shown):
            # the first keys: one picture of them (ungrouped and enabled, as ours are), the keys right after
            self._pictured = True
            self.call_after_refresh(self.keys_after_picture)
            shown = [footer_picture(shown)]
        yield from shown
        yield from palette

    async def keys_after_picture(self) -> None:
        """The first frame's picture of the keys (:func:`footer_picture`) becomes the keys, drawn the same."""
        await self.recompose()

    def on_resize(self, event: Any) -> None:
        if event.size.width != self._width and getattr(self, "_bindings_ready", False):
            self.call_after_refresh(self.recompose)

    def bindings_changed(self, screen: Any) -> None:
        try:
            shown = tuple((b.key, b.description, b.action, enabled)
                          for (_, b, enabled, _tip) in screen.active_bindings.values() if b.show)
        except Exception:  # noqa: BLE001 - a Textual without this shape: behave as Footer does
            shown = None
        ready = getattr(self, "_bindings_ready", False)
        if shown is not None and shown == self._shown and ready:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._shown = shown  # Footer recomposes now; else it waits, and so do we
            if not ready:
                # the first keys: Footer recomposes after the next refresh, a frame without keys
                # first; recomposed now (Widget.recompose holds the app's batch: no frame meanwhile)
                # they are in the app's first frame
                self._bindings_ready = True
                self.call_next(self.recompose)
                return
        super().bindings_changed(screen)
