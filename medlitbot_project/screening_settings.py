"""Settings of screening's full-text stage (screening/fulltext_pdf.py).

Read from the same environment (and `.env`, which settings.py has loaded into it) as every
other setting, and star-imported by settings.py: they live here only so that settings.py stays
under the 450 lines a module may have.
"""

import environ

env = environ.Env()

# A report's PDF is refused, and nothing kept, past its size, its page count, what its streams
# inflate to in all, or the characters of text extracted.
FULLTEXT_MAX_PDF_MB = env.int("FULLTEXT_MAX_PDF_MB", default=50)
FULLTEXT_MAX_PAGES = env.int("FULLTEXT_MAX_PAGES", default=500)
FULLTEXT_MAX_INFLATED_MB = env.int("FULLTEXT_MAX_INFLATED_MB", default=200)
FULLTEXT_MAX_TEXT_CHARS = env.int("FULLTEXT_MAX_TEXT_CHARS", default=3_000_000)
