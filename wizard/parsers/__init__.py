"""Pure parsers for every evidence format (DESIGN.md "Evidence bundle format").

Each module parses one format into small frozen records and never raises: malformed,
truncated, binary or empty input gives partial or empty results. Stdlib only; regexes are
compiled at import. The probes combine these results into Facts.
"""
