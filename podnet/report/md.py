"""Text from data or config inside the Markdown the notebooks show (issue 45).

A notebook's ``Markdown(...)`` output is rendered to HTML (nbconvert's mistune, JupyterLab's
marked), which passes raw HTML through: a reason such as ``launch.tools.<tool>.tests[].sweep``
would lose ``<tool>``, taken as a tag. :func:`text` writes ``&``, ``<`` and ``>`` of such text as
HTML entities, so it reads as written; the Markdown around it (``**``, ``- ``, backticks) is ours
and stays as it is. Text inside a backtick code span needs none (its entities would show literally).
Names the config schema restricts (experiment, variant, scenario, tool, test: letters, digits,
``.``, ``_``, ``-``) cannot hold these characters.
"""

from __future__ import annotations


def text(value: object) -> str:
    """``value`` as text for Markdown rendered to HTML: ``&``, ``<``, ``>`` as ``&amp;``, ``&lt;``,
    ``&gt;`` (the rest as it is)."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["text"]
