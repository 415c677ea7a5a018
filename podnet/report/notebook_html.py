"""An executed notebook as one self-contained HTML page: figures embedded, code folded.

nbconvert's lab template, with its scripts from CDNs (require.js, MathJax) removed so the page
needs no network, and a few lines of inline script that fold every code cell into a
``<details>`` ("code") the reader can open.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>", re.S)
_MATHJAX_CONFIG = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)

FOLD = """
<style>details.podnet-code > summary { cursor: pointer; color: #666; font-size: 0.8em; margin: 2px 0 }</style>
<script>
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".jp-CodeCell .jp-Cell-inputWrapper").forEach(function (el) {
    var d = document.createElement("details");
    d.className = "podnet-code";
    var s = document.createElement("summary");
    s.textContent = "code";
    d.appendChild(s);
    el.parentNode.insertBefore(d, el);
    d.appendChild(el);
  });
});
</script>
"""


def to_html(notebook: nbformat.NotebookNode) -> str:
    """The HTML page of an executed notebook (no remote resources)."""
    exporter = HTMLExporter(template_name="lab")
    exporter.embed_images = True
    html, _ = exporter.from_notebook_node(notebook)
    html = _MATHJAX_CONFIG.sub("", html)
    html = _REMOTE_SCRIPT.sub("", html)
    return html.replace("</head>", FOLD + "</head>", 1)


def render_node(notebook: nbformat.NotebookNode, html_path: str | Path) -> Path:
    """Write an executed notebook (as papermill returns it: the same page as its file read back)
    as HTML to ``html_path``."""
    out = Path(html_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_html(notebook))
    return out


def warm_up() -> None:
    """Render a one-cell notebook to HTML in memory: nbconvert's templates, highlighter and
    Markdown renderer are loaded once for a process that forks HTML jobs (``podnet.config.warm``;
    about 0.5 s of CPU each)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# title\n\nsome *text*"),
        nbformat.v4.new_code_cell(
            "x = 1",
            outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=1)],
        ),
    ]
    to_html(nb)
