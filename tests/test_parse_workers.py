"""The first phase of a sync in parallel: files parsed and chunked in worker processes (a step sent
with the file runs there after the parse, with its own time limit), read ahead of the writes on
threads whose results come back in order, and an index equal to the one parsed in-process."""

from __future__ import annotations

import os
import pickle
import random
import sys
import threading
import time
import types
from collections.abc import Sequence
from pathlib import Path

import pytest

import workerkit
from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.errors import ParseError
from docshelf.index.ahead import Ahead
from docshelf.parse import default_registry
from docshelf.parse.worker import parse_isolated, parse_then
from docshelf.testing import Stages

_MD = b"---\ntitle: Steps\n---\n# Steps\n\nA step runs after the parse.\n"


def test_a_step_sent_with_the_file_runs_in_the_worker_after_the_parse() -> None:
    pid, title = parse_then(default_registry(), _MD, "a.md", 30, 512, workerkit.where_and_title)
    assert pid != os.getpid()
    assert title == "Steps"


def test_a_step_that_cannot_be_sent_runs_here_with_the_parse() -> None:
    pid, title = parse_then(default_registry(), _MD, "a.md", 30, 512, lambda p: (os.getpid(), p.title))
    assert (pid, title) == (os.getpid(), "Steps")


def test_a_step_the_worker_cannot_load_runs_here_after_the_parse_there() -> None:
    # a step from a module only this process has (a user's script, run as __main__)
    module = types.ModuleType("docshelf_test_only_here")
    exec("import os\ndef where(parsed):\n    return os.getpid(), parsed.text\n", module.__dict__)
    sys.modules[module.__name__] = module
    try:
        pid, parsed_by = parse_then(workerkit.pid_registry(), b"0", "a.pid", 30, 512, module.where)
    finally:
        del sys.modules[module.__name__]
    assert pid == os.getpid()
    assert parsed_by != str(os.getpid())  # the parse kept its worker (its time and memory limits)


def test_the_step_s_parse_error_is_the_file_s() -> None:
    with pytest.raises(ParseError, match="refused by the step"):
        parse_then(default_registry(), _MD, "a.md", 30, 512, workerkit.refuse)


def test_the_step_has_a_time_limit_of_its_own_after_the_parse() -> None:
    # 1.2 s of parsing, then 1.2 s of the step, each within timeout_s (1 s) and the kill's grace (1 s):
    # one clock over both would have killed the worker at 2 s
    text = parse_then(workerkit.pid_registry(), b"1.2", "a.pid", 1, 512, workerkit.slow_then)
    assert text.isdigit()
    with pytest.raises(ParseError, match=r"took over 1 s \(parse.timeout_s\)"):
        parse_then(workerkit.pid_registry(), b"5", "b.pid", 1, 512, workerkit.slow_then)


@pytest.mark.parametrize("workers", [1, 2])
def test_files_parse_at_once_in_as_many_workers_as_asked(workers: int, tmp_path: Path) -> None:
    registry = workerkit.pid_registry()
    parse_isolated(registry, b"0", "warm.pid", 30, 512, workers)  # a worker exists already
    start = threading.Barrier(2)
    pids: list[str] = []
    # two workers: the first file ends only once the second has run (in another worker, then);
    # one: both take half a second, one after the other in the same worker
    flag = tmp_path / "second-ran"
    data = [f"until:{flag}".encode(), f"make:{flag}".encode()] if workers == 2 else [b"0.5", b"0.5"]

    def one(i: int) -> None:
        start.wait()
        while i and workers == 2 and not Path(f"{flag}.started").exists():
            time.sleep(0.01)  # the first file has its worker
        pids.append(parse_isolated(registry, data[i], f"{i}.pid", 30, 512, workers).text)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(pids)) == workers, pids


def test_reading_ahead_gives_results_in_order_within_its_depth() -> None:
    started: list[int] = []
    taken = 0

    def work(i: int) -> int:
        started.append(i)
        time.sleep(random.random() / 200)
        return i * i

    with Ahead(work, range(60), depth=5, threads=3) as ahead:
        for i in range(60):
            assert len(started) <= taken + 5
            assert next(ahead) == i * i
            taken += 1
        with pytest.raises(StopIteration):
            next(ahead)


def test_reading_ahead_raises_an_error_where_its_result_would_come_and_stops_when_closed() -> None:
    def work(i: int) -> int:
        if i == 3:
            raise ValueError("three")
        return i

    done: list[int] = []
    with Ahead(work, range(1000), depth=4, threads=2) as ahead:
        done += [next(ahead) for _ in range(3)]
        with pytest.raises(ValueError, match="three"):
            next(ahead)
    assert done == [0, 1, 2]
    time.sleep(0.2)
    assert not any(t.is_alive() for t in ahead._threads)


def _chunks(settings: Settings, corpus: Path) -> tuple[list[tuple[object, ...]], list[str]]:
    with Stages(settings, embedder=HashEmbedder()) as rt:
        report = rt.indexer().sync("test", [corpus])
        rows: list[tuple[object, ...]] = sorted(
            (c.id, c.doc_id, c.text, c.char_start, c.char_end, c.line_start, c.line_end, c.token_count,
             c.embed_key, c.heading_path, c.page)
            for c in rt.store.iter_chunks()
        )  # fmt: skip
        added: list[str] = report.added
    return rows, added


def test_the_index_is_the_same_parsed_in_workers_or_in_process(
    settings: Settings, corpus: Path, tmp_path: Path
) -> None:
    if settings.store.url:
        pytest.skip("one embedded index per run: the two runs need two data dirs")
    settings.store.data_dir = tmp_path / "here"
    settings.parse.isolate, settings.parse.workers = False, 1
    here = _chunks(settings, corpus)
    settings.store.data_dir = tmp_path / "workers"
    settings.parse.isolate, settings.parse.workers = True, 2
    in_workers = _chunks(settings, corpus)
    assert here[0] and here == in_workers


def test_e5_s_count_sent_to_a_worker_counts_as_the_embedder(tmp_path: Path) -> None:
    from docshelf.embed.e5 import E5Embedder

    e5 = E5Embedder(cache_dir=tmp_path)
    count = e5.portable_counter()
    assert count is not None
    blob = pickle.dumps(count)
    assert len(blob) < 500  # the cache dir, not the tokenizer's tables
    sent = pickle.loads(blob)
    texts = ["Keyword first, vectors after.", "日本語のテキストも数える", "x" * 3000, "  spaced   out  "]
    assert [sent(t) for t in texts] == [e5.count_tokens(t) for t in texts]
    assert sent._embedder is not e5


def test_a_worker_outlives_the_thread_that_asked_for_it() -> None:
    # Linux kills a child with its parent-death signal when the *thread* that started it ends: a
    # sync's reading threads end with the sync, and their workers serve the next one
    from docshelf.parse import worker

    worker._POOL.stop()
    registry = workerkit.pid_registry()
    first: list[str] = []
    asker = threading.Thread(
        target=lambda: first.append(parse_isolated(registry, b"0", "a.pid", 30, 512).text)
    )
    asker.start()
    asker.join()
    time.sleep(0.3)
    assert parse_isolated(registry, b"0", "b.pid", 30, 512).text == first[0]


def test_a_sync_leaves_one_idle_worker_of_its_many(settings: Settings, corpus: Path) -> None:
    # each worker holds its parsers' imports and the token counter's tables; a server lives long
    from docshelf.parse import worker

    settings.parse.isolate, settings.parse.workers = True, 3
    with Stages(settings, embedder=HashEmbedder()) as rt:
        assert len(rt.indexer().sync("test", [corpus]).added) == 8
    assert len(worker._POOL.idle) == 1 and worker._POOL.busy == 0


def test_a_file_parsed_in_a_worker_comes_back_with_its_keyword_terms_made_there(tmp_path: Path) -> None:
    """The worker analyses the chunks it made (the indexer's thread only writes them): the same
    terms, language and script counts as this process's analyzer gives."""
    from docshelf.analyze import Analyzer
    from docshelf.analyze.language import count_language
    from docshelf.analyze.portable import PortableAnalyzer
    from docshelf.analyze.scripts import script_words
    from docshelf.index.prepare import prepare
    from docshelf.types import SourceFile

    settings = Settings(parse={"isolate": True, "workers": 1})
    analyzer = Analyzer(["english", "french"], extra_stopwords=["foo"])
    text = "# Über die Brücke\n\nDie Stadt Berlin ist die Hauptstadt. DNA mutations, 東京は日本の首都.\n"
    path = tmp_path / "note.md"
    path.write_text(text, encoding="utf-8")
    data = path.read_bytes()
    f = SourceFile(tmp_path, path, "note.md", len(data), path.stat().st_mtime_ns)
    embedder = HashEmbedder()
    registry = default_registry(settings)
    args = (settings, registry, embedder, 64, "test", f, data, "d1", True)
    made = prepare(*args, PortableAnalyzer(analyzer))
    plain = prepare(*args)
    assert made is not None and plain is not None and plain.terms is None
    assert made.analyzer == analyzer.fingerprint and made.chunks == plain.chunks
    assert made.terms == [analyzer.chunk_terms(made.doc.title, c.heading_path, c.text) for c in plain.chunks]
    assert "foo" not in analyzer.terms("foo bar")  # the worker's analyzer has this one's configuration
    languages: dict[str, float] = {}
    count_language(analyzer.language, [c.text for c in plain.chunks], languages)
    assert made.languages == languages and made.scripts == script_words(c.text for c in plain.chunks)


def test_an_analyzer_sent_to_another_process_is_rebuilt_there_or_not_used() -> None:
    from docshelf.analyze import Analyzer
    from docshelf.analyze.portable import PortableAnalyzer

    analyzer = Analyzer(["english", "german"], stopwords=False, detect=False)
    blob = pickle.dumps(PortableAnalyzer(analyzer))
    assert len(blob) < 400  # its configuration, not its stemmers
    sent = pickle.loads(blob)
    there = sent.get()
    assert there is not None and there is not analyzer and there.fingerprint == analyzer.fingerprint
    text = "Die Häuser der Stadt und the running dogs"
    assert there.chunk_terms("T", ("H",), text) == analyzer.chunk_terms("T", ("H",), text)
    sent.fingerprint = "a0-built-elsewhere"  # e.g. a word list installed in one environment only
    assert sent.get() is None


def test_a_file_whose_chunking_took_half_the_time_limit_is_left_to_the_writer_to_analyse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Analysing costs about what chunking did: after a slow chunking the step would overrun
    parse.timeout_s and the file be skipped, so its terms are made by the writer (no limit)."""
    from docshelf.analyze import Analyzer
    from docshelf.analyze.portable import PortableAnalyzer
    from docshelf.index.prepare import Build
    from docshelf.parse.limits import Deadline
    from docshelf.types import SourceFile

    clock = [0.0]

    class Clocked(Deadline):  # the step's deadline on a clock the token count moves
        def __init__(self, path: str, seconds: float) -> None:
            self.path, self.seconds, self.ends = path, seconds, clock[0] + seconds

        def remaining(self) -> float:
            return max(0.001, self.ends - clock[0])

    monkeypatch.setattr("docshelf.index.prepare.Deadline", Clocked)
    path = tmp_path / "slow.md"
    path.write_text("# Slow\n\n" + "word " * 400, encoding="utf-8")
    parsed = default_registry(Settings()).parse(path.read_bytes(), "slow.md")
    f = SourceFile(tmp_path, path, "slow.md", path.stat().st_size, 0)
    counts = [0]

    def build(seconds_per_count: float) -> Build:
        def count(text: str) -> int:
            clock[0] += seconds_per_count
            counts[0] += 1
            return len(text.split()) + 2

        return Build(count, 64, 8, 100.0, "hash", "test", f, "d", True, {}, PortableAnalyzer(Analyzer()))

    fast = build(0.001)(parsed)  # chunking took a few seconds of the 100
    slow = build(70.0 / counts[0])(parsed)  # 70 of them
    assert fast is not None and slow is not None and fast.chunks == slow.chunks
    assert fast.terms is not None and slow.terms is None and slow.analyzer == ""


def test_a_sync_in_workers_leaves_no_analysis_to_its_own_thread(
    settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point of sending the analyzer: the sync's thread (which sets the first phase's pace)
    only writes. Were the analyzer not sent (unpicklable, another fingerprint), this process
    would analyse every chunk again."""
    from docshelf.analyze import Analyzer

    if settings.store.url:
        pytest.skip("the embedded store's keyword index; PostgreSQL takes the same terms")
    settings.parse.isolate, settings.parse.workers = True, 2
    here: list[str] = []
    analyse = Analyzer.chunk_terms

    def counted(self: Analyzer, title: str | None, heading_path: Sequence[str], text: str) -> list[str]:
        here.append(text)
        return analyse(self, title, heading_path, text)

    monkeypatch.setattr(Analyzer, "chunk_terms", counted)
    with Stages(settings, embedder=HashEmbedder()) as rt:
        report = rt.indexer().sync("test", [corpus])
        assert report.chunks_written > 0 and here == []
        assert rt.searcher().search("page the on-call engineer", mode="keyword").hits


class _Booting:
    """A parse worker whose start waits for ``gate`` (a process start and its parsers' imports)."""

    def __init__(self, gate: threading.Event, memory_mb: float) -> None:
        self.memory_bytes, self.gate, self.stopped = int(memory_mb * 1_048_576), gate, False

    def warm(self, registry: object) -> None:
        assert self.gate.wait(10)

    def stop(self) -> None:
        self.stopped = True


def test_a_file_waits_for_a_worker_already_running_not_for_a_new_one_to_start() -> None:
    """A sync of a few files took the process's warm worker for the first and started a second for
    the next, which then waited ~0.4 s for that process to import its parsers while the warm one,
    done in milliseconds, sat idle (every small sync paid it: watch, ingest, most tests)."""
    from docshelf.parse.worker import _Pool

    gate = threading.Event()
    made: list[_Booting] = []

    def make(memory_mb: float) -> _Booting:
        made.append(_Booting(gate, memory_mb))
        return made[-1]

    pool = _Pool(make)  # type: ignore[arg-type]
    running = _Booting(gate, 512)
    pool.idle.append(running)  # type: ignore[arg-type]
    first = pool.take(512, 2)
    assert first is running
    second: list[object] = []
    asker = threading.Thread(target=lambda: second.append(pool.take(512, 2)))
    asker.start()
    while not made:  # the second file starts a worker in the background and waits for either
        time.sleep(0.01)
    assert not second
    pool.give(first)  # type: ignore[arg-type]
    asker.join(5)
    assert second == [running] and not gate.is_set()  # the warm one, the new one still starting
    pool.give(running)  # type: ignore[arg-type]
    pool.stop(keep=1)  # the sync is over; the worker that was starting is let go when it is up
    gate.set()
    deadline = time.monotonic() + 5
    while not made[0].stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert made[0].stopped and pool.idle == [running] and pool.busy == 0
