"""`holdbench report` on files: T, H and any number of S to report.html, report.json and summary.md."""
