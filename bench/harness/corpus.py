"""A payload file of records that compress like real data: one JSON event per line, each line
exactly `size` bytes of ASCII, generated from a fixed seed (the same file for both systems).

Every event has varied field values (timestamps, ids, IPs, URLs built from words, user agents,
countries, prices, item lists) and a free-text field cut from English prose shipped on the
machine (/usr/share/common-licenses, else Python's own license text) that pads it to `size`.
ProducerPerformance --payload-file picks a random line per record.
"""
from __future__ import annotations

import json
import random
import re
import sys
import uuid
import zlib
from pathlib import Path

SEED = 20261202
TEXT_SOURCES = [Path("/usr/share/common-licenses"), Path(sys.prefix) / "lib"]

EVENTS = ["page_view", "click", "add_to_cart", "remove_from_cart", "checkout", "purchase",
          "search", "login", "logout", "signup", "video_play", "video_pause", "share", "rate"]
COUNTRIES = [("DE", "Berlin"), ("DE", "Hamburg"), ("FR", "Paris"), ("FR", "Lyon"),
             ("US", "New York"), ("US", "Austin"), ("US", "Seattle"), ("GB", "London"),
             ("JP", "Tokyo"), ("BR", "Sao Paulo"), ("IN", "Bengaluru"), ("NL", "Amsterdam"),
             ("ES", "Madrid"), ("IT", "Milan"), ("PL", "Warsaw"), ("CA", "Toronto")]
AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Mobile Safari/537.36",
    "okhttp/4.12.0", "curl/8.5.0", "python-requests/2.32.3",
]
DEVICES = ["desktop", "mobile", "tablet", "tv", "bot"]
CURRENCIES = ["EUR", "USD", "GBP", "JPY", "BRL", "INR"]


def _prose() -> tuple[str, list[str]]:
    """English text from files shipped on the machine, reduced to characters JSON keeps as
    is; and the files it came from."""
    chunks, used = [], []
    for src in TEXT_SOURCES:
        files = sorted(p for p in src.glob("*") if p.is_file() and not p.is_symlink()) \
            if src.is_dir() else []
        if src.name == "lib":
            files = sorted(src.glob("python3*/LICENSE.txt"))
        for f in files:
            try:
                chunks.append(f.read_text(errors="ignore"))
                used.append(str(f))
            except OSError:
                pass
        if sum(map(len, chunks)) > 200_000:
            break
    text = re.sub(r"[^A-Za-z0-9 .,;:()'-]+", " ", " ".join(chunks))
    text = re.sub(r" +", " ", text)
    if len(text) < 10_000:
        raise RuntimeError(f"not enough prose found in {TEXT_SOURCES} to build the corpus")
    return text, used


def _event(rng: random.Random, words: list[str], t_ms: int) -> dict:
    country, city = rng.choice(COUNTRIES)
    path = "/".join(rng.choice(words).lower() for _ in range(rng.randint(1, 4)))
    items = [{"sku": f"SKU-{rng.randint(10000, 99999)}", "qty": rng.randint(1, 5),
              "price": round(rng.uniform(0.5, 500), 2)} for _ in range(rng.randint(0, 4))]
    secs, ms = divmod(t_ms, 1000)
    return {
        "ts": f"2026-12-02T{secs // 3600 % 24:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{ms:03d}Z",
        "event": rng.choice(EVENTS),
        "user_id": rng.randint(1, 2_000_000),
        "session": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "ip": f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "url": f"https://shop.example.com/{path}?ref={rng.choice(words).lower()}",
        "agent": rng.choice(AGENTS),
        "device": rng.choice(DEVICES),
        "country": country, "city": city,
        "latency_ms": round(rng.lognormvariate(3, 1), 1),
        "currency": rng.choice(CURRENCIES),
        "items": items,
        "ok": rng.random() > 0.03,
    }


def write(path: Path, lines: int, size: int) -> dict:
    """Writes `lines` JSON events of exactly `size` bytes each, newline-separated. Returns a
    description (lines, size, sources, and the zlib level-1 ratio of the whole file)."""
    rng = random.Random(SEED)
    prose, used = _prose()
    words = [w for w in re.findall(r"[A-Za-z]{4,}", prose)]
    out = []
    t_ms = 8 * 3600 * 1000
    for _ in range(lines):
        t_ms += rng.randint(0, 40)
        ev = _event(rng, words, t_ms)
        ev["note"] = ""
        base = len(json.dumps(ev, separators=(",", ":")))
        room = size - base
        if room < 0:
            ev["items"] = []
            base = len(json.dumps(ev, separators=(",", ":")))
            room = size - base
        start = rng.randrange(0, len(prose) - room - 1)
        ev["note"] = prose[start:start + room]
        line = json.dumps(ev, separators=(",", ":"))
        assert len(line) == size and "\n" not in line, (len(line), size)
        out.append(line)
    data = "\n".join(out).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {"file": str(path), "lines": lines, "record_size": size, "seed": SEED,
            "text_from": used, "prose_chars": len(prose),
            "zlib1_ratio": round(len(data) / len(zlib.compress(data, 1)), 2),
            "example": out[0][:300] + "..."}


if __name__ == "__main__":
    print(json.dumps(write(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])), indent=1))
