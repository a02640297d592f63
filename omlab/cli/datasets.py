"""``omlab datasets list|build``: what datasets omlab reads, and fetching or generating them."""

from __future__ import annotations

import argparse
from pathlib import Path

from omlab.bench.datasets import LOCOMO_URL, dump_jsonl, load_locomo, load_longmemeval, load_synthetic
from omlab.bench.datasets.longmemeval import DEFAULT_REVISION, HUB_REPO
from omlab.bench.datasets.synthetic import GENERATOR_VERSION

KINDS = (
    (
        "synthetic",
        (
            f"seeded generator ({GENERATOR_VERSION}); any size; planted facts, updates, temporal and "
            "abstention questions"
        ),
        '[dataset] kind = "synthetic", seeds, target_tokens',
    ),
    (
        "longmemeval",
        f"LongMemEval oracle/s/m, hub {HUB_REPO} at {DEFAULT_REVISION[:12]}…",
        '[dataset] kind = "longmemeval", path or subset',
    ),
    ("locomo", f"LoCoMo locomo10.json ({LOCOMO_URL})", '[dataset] kind = "locomo", path (file or URL)'),
    (
        "jsonl",
        "your own conversations in omlab's JSONL format (datasets/README.md)",
        '[dataset] kind = "jsonl", path',
    ),
    (
        "mastra",
        "your Mastra threads: a @mastra/libsql file or @mastra/pg URL (omlab import DB)",
        '[dataset] kind = "mastra", path, resource, threads, since, until',
    ),
)


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "datasets",
        epilog="examples:\n  omlab datasets list\n  omlab datasets build synthetic --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="list, fetch or generate datasets",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser(
        "list",
        help="the dataset kinds and the local sample files",
        epilog="examples:\n  omlab datasets list\n  omlab datasets list --samples my-samples/",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("--samples", default="datasets/samples", metavar="DIR", help="sample folder to list")
    listing.set_defaults(handler=handle_list)

    build = verbs.add_parser(
        "build",
        help="generate a synthetic dataset or download a benchmark",
        epilog="examples:\n  omlab datasets build synthetic --seeds 1 2 --target-tokens 200000 --out synth.jsonl\n  omlab datasets build locomo",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = build.add_subparsers(dest="kind", metavar="KIND", required=True)
    synthetic = kinds.add_parser(
        "synthetic",
        help="write seeded synthetic conversations as JSONL",
        epilog="examples:\n  omlab datasets build synthetic --seeds 1 2 3 --target-tokens 1000000 --n-questions 40 --out synth.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    synthetic.add_argument("--seeds", type=int, nargs="+", default=[1], metavar="SEED")
    synthetic.add_argument("--target-tokens", type=int, default=100_000, metavar="N")
    synthetic.add_argument("--n-questions", type=int, default=20, metavar="N")
    synthetic.add_argument("--out", required=True, metavar="FILE.jsonl")
    synthetic.set_defaults(handler=handle_synthetic)
    longmemeval = kinds.add_parser(
        "longmemeval",
        help="download a LongMemEval file from the hub (pinned revision)",
        epilog="examples:\n  omlab datasets build longmemeval --subset s --cache-dir ~/data/longmemeval",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    longmemeval.add_argument("--subset", choices=("oracle", "s", "m"), default="oracle")
    longmemeval.add_argument("--revision", default=DEFAULT_REVISION)
    longmemeval.add_argument("--cache-dir", metavar="DIR")
    longmemeval.set_defaults(handler=handle_longmemeval)
    locomo = kinds.add_parser(
        "locomo",
        help="download locomo10.json",
        epilog="examples:\n  omlab datasets build locomo --cache-dir ~/data/locomo",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    locomo.add_argument("--source", default=LOCOMO_URL, metavar="URL")
    locomo.add_argument("--cache-dir", metavar="DIR")
    locomo.set_defaults(handler=handle_locomo)


def handle_list(args: argparse.Namespace) -> int:
    width = max(len(kind) for kind, _, _ in KINDS)
    for kind, what, usage in KINDS:
        print(f"{kind:<{width}}  {what}\n{'':<{width}}  suite: {usage}")
    samples = Path(args.samples)
    if samples.is_dir():
        print(f"\nsample files in {samples}:")
        for path in sorted(samples.iterdir()):
            print(f"  {path}  ({path.stat().st_size:,} bytes)")
    return 0


def handle_synthetic(args: argparse.Namespace) -> int:
    info, conversations = load_synthetic(args.seeds, args.target_tokens, n_questions=args.n_questions)
    path = dump_jsonl(conversations, args.out)
    questions = sum(len(c.questions) for c in conversations)
    print(f"{path}: {len(conversations)} conversations, {questions} questions, sha256 {info.sha256[:16]}…")
    return 0


def handle_longmemeval(args: argparse.Namespace) -> int:
    info, conversations = load_longmemeval(None, args.subset, revision=args.revision, cache_dir=args.cache_dir)
    print(f"{info.source}: {len(conversations)} questions, sha256 {info.sha256}")
    return 0


def handle_locomo(args: argparse.Namespace) -> int:
    info, conversations = load_locomo(args.source, cache_dir=args.cache_dir)
    print(f"{info.source}: {len(conversations)} conversations, sha256 {info.sha256}")
    return 0
