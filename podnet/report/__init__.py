"""The report stage: figures, findings, the notebooks' helpers, seed reports, HTML (reads what stats writes)."""
