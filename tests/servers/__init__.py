"""Real loopback HTTP servers for tests and benchmarks (no mocks over the wire).

``search.SearchServer`` is a scriptable search service.  Tests start one per
test with a small fixture, so each test sees fresh counters::

    @pytest.fixture
    def server() -> Iterator[SearchServer]:
        with SearchServer() as running:
            yield running

``tests/`` has no ``__init__.py``, so pytest puts ``tests/`` on ``sys.path`` and
this package imports as ``servers`` (``from servers.search import Reply``).
"""
