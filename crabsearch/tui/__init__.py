"""The terminal app (Textual). It talks to ``crabsearch.search.Engine`` and
``crabsearch.index.Indexer`` only; it never touches Whoosh."""
