"""Dataset loaders that all produce the canonical schema of ``omlab.bench.datasets.schema``."""

from omlab.bench.datasets.errors import DatasetError
from omlab.bench.datasets.jsonl import dump_jsonl, load_jsonl
from omlab.bench.datasets.locomo import CATEGORY_NAMES, LOCOMO_URL, load_locomo
from omlab.bench.datasets.longmemeval import load_longmemeval
from omlab.bench.datasets.mastra import MastraImportError, load_mastra, read_mastra
from omlab.bench.datasets.provenance import conversations_digest, sha256_file
from omlab.bench.datasets.synthetic import generate_synthetic, load_synthetic

__all__ = [
    "CATEGORY_NAMES",
    "LOCOMO_URL",
    "DatasetError",
    "MastraImportError",
    "conversations_digest",
    "dump_jsonl",
    "generate_synthetic",
    "load_jsonl",
    "load_locomo",
    "load_longmemeval",
    "load_mastra",
    "load_synthetic",
    "read_mastra",
    "sha256_file",
]
