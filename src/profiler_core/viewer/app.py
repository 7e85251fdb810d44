"""The viewer's Starlette application: a few GET routes over a catalog of runs.

No part of a URL reaches the file system: a run is looked up by its key in the
catalog, a report file by its fixed name in ``REPORT_FILES``, a stylesheet or
script by its name in the assets shipped in the package. Pages carry a
Content-Security-Policy that allows only this server's own script, and requests
must name a loopback host (``TrustedHostMiddleware``), so a web page elsewhere
cannot read the viewer through a DNS name pointed at 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import ProfilerError
from .catalog import Catalog, RunView
from .index import SORT_COLUMNS, Cell, RowFilter
from .pages import message_page, not_found_page, run_page, run_url, runs_page
from .session import Session, pair_page, session_page

#: The files of a run's report folder the viewer serves: URL name -> (path in the report
#: folder, media type).
REPORT_FILES = {
    "report.html": ("report.html", "text/html; charset=utf-8"),
    "report.md": ("report.md", "text/markdown; charset=utf-8"),
    "analysis.md": ("analysis.md", "text/markdown; charset=utf-8"),
    "data/results.csv": ("data/results.csv", "text/csv; charset=utf-8"),
    "data/results.json": ("data/results.json", "application/json"),
    "data/summary.json": ("data/summary.json", "application/json"),
}

#: Headers on every response.
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self' "
        "'unsafe-inline'; img-src 'self' data:; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def load_assets() -> dict[str, tuple[bytes, str]]:
    """The stylesheets and script shipped in the package (read once), by URL name."""
    from ..report.html import CSS

    folder = resources.files(__name__.rpartition(".")[0]).joinpath("assets")
    return {
        "viewer.css": (
            folder.joinpath("viewer.css").read_bytes(),
            "text/css; charset=utf-8",
        ),
        "viewer.js": (
            folder.joinpath("viewer.js").read_bytes(),
            "text/javascript; charset=utf-8",
        ),
        # The report's own stylesheet, so its verdict and charts look the same on a run's page.
        "report.css": (CSS.encode("utf-8"), "text/css; charset=utf-8"),
    }


def _page(html: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def _not_found(what: str) -> HTMLResponse:
    return _page(not_found_page(what), 404)


def _int(text: str | None, default: int | None = None) -> int | None:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return None


def row_filter(params: Any) -> RowFilter:
    """The rows table's filter from a query string (unknown sort columns fall back to
    file order)."""
    sort = params.get("sort", "row")
    return RowFilter(
        mode=params.get("mode", ""), scenario=params.get("scenario", ""), model=params.get("model", ""),
        outcome=params.get("outcome", ""), reason=params.get("reason", ""), q=params.get("q", "")[:200],
        sort=sort if sort in SORT_COLUMNS else "row", desc=params.get("desc") == "1",
    )  # fmt: skip


class Viewer:
    """The routes, bound to one catalog of runs."""

    def __init__(self, catalog: Catalog, where: str) -> None:
        self.catalog = catalog
        self.where = where
        self.assets = load_assets()

    def _run(self, request: Request) -> RunView | None:
        return self.catalog.get(request.path_params["key"])

    def runs(self, request: Request) -> Response:
        """``/``: every run, newest first."""
        return _page(runs_page(self.catalog.refresh(), self.where))

    def run(self, request: Request) -> Response:
        """``/runs/{key}/``: a run's report and rows."""
        run = self._run(request)
        if run is None:
            return _not_found("No such run.")
        page = _int(request.query_params.get("page"), 1) or 1
        return _page(run_page(run, row_filter(request.query_params), page))

    def session(self, request: Request) -> Response:
        """``/runs/{key}/session?model=&mode=&scenario=&iteration=``: one session."""
        run = self._run(request)
        if run is None:
            return _not_found("No such run.")
        q = request.query_params
        cell = self._cell(
            run,
            q.get("model"),
            q.get("mode", ""),
            q.get("scenario", ""),
            _int(q.get("iteration")),
        )
        if cell is None:
            return _not_found("No such session in this run.")
        index = run.rows()
        others = [
            m
            for m in index.values["mode"]
            if m != cell[1] and index.find((cell[0], m, cell[2], cell[3])) is not None
        ]
        return _page(
            session_page(run, self._load(run, cell), others, index.contrast(cell))
        )

    def pair(self, request: Request) -> Response:
        """``/runs/{key}/pair?model=&scenario=&iteration=&a=MODE&b=MODE[&ib=ITERATION]``:
        two sessions side by side.

        ``ib``: B's iteration when it is not A's (a pass beside a fail of the same mode).
        """
        run = self._run(request)
        if run is None:
            return _not_found("No such run.")
        q = request.query_params
        iteration = _int(q.get("iteration"))
        iterations = {
            "a": iteration,
            "b": _int(q.get("ib")) if q.get("ib") is not None else iteration,
        }
        cells = [
            self._cell(
                run,
                q.get("model"),
                q.get(side, ""),
                q.get("scenario", ""),
                iterations[side],
            )
            for side in ("a", "b")
        ]
        if cells[0] is None or cells[1] is None:
            return _not_found("One of the two sessions is not in this run.")
        return _page(
            pair_page(run, self._load(run, cells[0]), self._load(run, cells[1]))
        )

    def _cell(
        self,
        run: RunView,
        model: str | None,
        mode: str,
        scenario: str,
        iteration: int | None,
    ) -> Cell | None:
        """The cell a query names; without a model (a report's link), the one model that ran it."""
        if iteration is None:
            return None
        index = run.rows()
        if model is not None:
            cell = (model, mode, scenario, iteration)
            return cell if index.find(cell) is not None else None
        found = [
            (m, mode, scenario, iteration)
            for m in index.values["model"]
            if index.find((m, mode, scenario, iteration)) is not None
        ]
        return found[0] if len(found) == 1 else None

    def _load(self, run: RunView, cell: Cell) -> Session:
        index = run.rows()
        i = index.find(cell)
        assert i is not None
        row = index.row(i)
        problems: list[str] = []
        trace = _quietly(lambda: run.traces().get(cell), problems)
        bundle = _quietly(lambda: run.analysis().get(cell), problems)
        return Session(
            cell=cell, row=row, trace=trace, bundle=bundle, problems=tuple(problems)
        )

    def report_file(self, request: Request) -> Response:
        """A file of the run's report folder, by its fixed name."""
        run = self._run(request)
        name = request.path_params.get("name", "")
        if run is None or name not in REPORT_FILES or run.files.report_dir is None:
            return _not_found("No such file.")
        relative, media = REPORT_FILES[name]
        path = run.files.report_dir / relative
        try:
            content = path.read_bytes()
        except OSError:
            return _not_found("This run's report has no such file.")
        return Response(content, media_type=media, headers=SECURITY_HEADERS)

    def static(self, request: Request) -> Response:
        """A stylesheet or script shipped with the viewer."""
        found = self.assets.get(request.path_params["name"])
        if found is None:
            return _not_found("No such file.")
        content, media = found
        return Response(content, media_type=media, headers=SECURITY_HEADERS)

    def not_found(self, request: Request, exc: Exception) -> Response:
        """Every unknown URL."""
        return _not_found("No such page.")

    def failed(self, request: Request, exc: Exception) -> Response:
        """A run file that cannot be read: its one-line reason, not a traceback."""
        return _page(message_page("Cannot read", str(exc)), 500)


def _quietly(read: Callable[[], Any], problems: list[str]) -> Any:
    try:
        return read()
    except (ProfilerError, OSError) as exc:
        problems.append(str(exc))
        return None


def make_app(
    catalog: Catalog,
    where: str,
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]"),
) -> Starlette:
    """The viewer as an ASGI application."""
    v = Viewer(catalog, where)
    routes = [
        Route("/", v.runs),
        # /runs/ lists the runs too: a URL cut back by hand lands on the list, not on a 404
        Route("/runs", lambda r: RedirectResponse("/", 308)),
        Route("/runs/", lambda r: RedirectResponse("/", 308)),
        Route("/runs/{key}/", v.run),
        Route(
            "/runs/{key}",
            lambda r: RedirectResponse(run_url(r.path_params["key"]), 308),
        ),
        Route("/runs/{key}/session", v.session),
        Route("/runs/{key}/pair", v.pair),
        Route("/runs/{key}/{name:path}", v.report_file),
        Route("/static/{name}", v.static),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))]
    handlers: dict[Any, Any] = {
        404: v.not_found,
        ProfilerError: v.failed,
        OSError: v.failed,
    }
    return Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)


__all__ = [
    "REPORT_FILES",
    "SECURITY_HEADERS",
    "Viewer",
    "load_assets",
    "make_app",
    "row_filter",
]
