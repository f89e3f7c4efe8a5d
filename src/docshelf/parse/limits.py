"""Parse limits (time, pages, unzipped size) and OCR options, taken from ``ParseSettings``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from docshelf.errors import ParseError

if TYPE_CHECKING:
    from docshelf.config import ParseSettings

__all__ = ["Deadline", "ParseLimits"]


@dataclass(frozen=True)
class ParseLimits:
    """What one parse may cost; the defaults equal ``ParseSettings()``."""

    timeout_s: float = 300.0
    max_pages: int = 5000
    max_unzipped_bytes: int = 512 * 1024 * 1024
    max_xml_part_bytes: int = 32 * 1024 * 1024
    ocr: bool = True
    ocr_languages: tuple[str, ...] = field(default_factory=tuple)  # empty: chosen per image (script)

    @classmethod
    def from_settings(cls, settings: ParseSettings | None) -> ParseLimits:
        """Limits from settings (None: the defaults)."""
        if settings is None:
            return cls()
        return cls(
            timeout_s=settings.timeout_s,
            max_pages=settings.max_pages,
            max_unzipped_bytes=int(settings.max_unzipped_mb * 1_048_576),
            max_xml_part_bytes=int(settings.max_xml_part_mb * 1_048_576),
            ocr=settings.ocr,
            ocr_languages=tuple(settings.ocr_languages),
        )

    def deadline(self, path: str) -> Deadline:
        """A deadline starting now for parsing ``path``."""
        return Deadline(path, self.timeout_s)


class Deadline:
    """Checked between pages, chapters and rows: Python parsers cannot be interrupted from
    outside, so a long file is stopped at its next step once the time is spent."""

    def __init__(self, path: str, seconds: float) -> None:
        self.path = path
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (at least a small positive number, for subprocess timeouts)."""
        return max(0.001, self.ends - time.monotonic())

    def check(self) -> None:
        """ParseError once the time is spent."""
        if time.monotonic() > self.ends:
            raise self.error()

    def error(self) -> ParseError:
        return ParseError(
            f"{self.path}: parsing took over {self.seconds:g} s (parse.timeout_s); "
            "raise the limit or exclude the file"
        )
