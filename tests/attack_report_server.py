"""Another login's attack on a report server (run as that login, by ``test_report_server.py``):
every path and trick it can think of, over TCP and over the unix socket, then the folder and the
referee's process read directly. Standard library only (the system's ``python3 -I``).

Run: python3 -I attack_report_server.py '{"port": P or null, "socket": PATH or null,
     "ids": [MATCH_ID, ...], "names": [ENTRANT, ...], "folder": OUTPUT}'

Prints one JSON object: ``asked`` ([what, status or refusal, the body's first 300 bytes]) and
``read`` ([what, what came of it]) for the direct reads."""

import json
import os
import socket
import sys

REFUSED_READ = "refused"


def ask(args: dict, raw: bytes) -> tuple[str, bytes]:
    """The status (or why none came) and body of one raw request."""
    try:
        if args["socket"] is not None:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(10)
            conn.connect(args["socket"])
        else:
            conn = socket.create_connection(("127.0.0.1", args["port"]), timeout=10)
    except OSError as err:
        return f"cannot connect: {err.__class__.__name__}", b""
    try:
        conn.sendall(raw)
        conn.shutdown(socket.SHUT_WR)  # all said: a request cut short is answered at once
        got = b""
        while True:
            piece = conn.recv(65536)
            if not piece:
                break
            got += piece
    except OSError as err:
        return f"cut: {err.__class__.__name__}", b""
    finally:
        conn.close()
    words = got.split(b" ", 2)  # the whole answer is looked at (HTTP/0.9 has no head)
    status = words[1].decode("ascii", "replace") if len(words) > 1 and \
        got.startswith(b"HTTP/") else "no status"
    return status, got


def paths(ids: list, names: list) -> list:
    """Every target tried, for each match id: the files, their folders, encodings, links."""
    found = ["/", "/report", "/report/", "/report/index.html", "/report/data.js",
             "/report/alive.js", "/report/matches/0.js", "/report/replay.html",
             "/report/viewer.js", "/results.jsonl", "/standings.json", "/tournament.yaml",
             "/games/", "/logs/", "/report/games/", "/report/replays/", "/preflight/",
             "/.deal-secret", "/.report-key", "/.ct-referee.json", "/%2edeal-secret",
             "/%2Ereport-key", "/report/%2e%2e/.deal-secret", "/report/..%2f.deal-secret",
             "/%252e%252e/.deal-secret", "/..%c0%af.deal-secret", "/report\\..\\.deal-secret",
             "/?key=", "/?key=" + "A" * 43, "/report/index.html?key=guess",
             "/report/index.html?key=guess&key=again", "*", "/" + "A" * 43 + "/",
             "/" + "A" * 43 + "/report/index.html", "/%41/report/index.html",
             "/report/index.html/" + "A" * 43]
    for match_id in ids:
        found += [
            f"/games/{match_id}.json.gz", f"/games/{match_id}.json",
            f"/report/games/{match_id}.html", f"/report/replays/{match_id}.js",
            f"/report/replay.html#id={match_id}", f"/logs/{match_id}/",
            f"//games/{match_id}.json.gz", f"/report/../games/{match_id}.json.gz",
            f"/report/%2e%2e/games/{match_id}.json.gz", f"/games/./{match_id}.json.gz",
            f"/games//{match_id}.json.gz", f"/%67ames/{match_id}.json.gz",
            f"/games/{match_id}%2ejson%2egz", f"/games/{match_id}.json.gz%00.html",
            f"/games/{match_id}.json.gz/", f"/games/{match_id.upper()}.json.gz",
            f"/report/games/{match_id}.html;x", f"/report/replays/{match_id}.js?x=1",
            f"/report/games/%2e%2e/%2e%2e/games/{match_id}.json.gz",
        ]
        for seat in range(4):
            for name in names:
                found += [f"/logs/{match_id}/{seat}-{name}.stderr",
                          f"/logs/{match_id}/{seat}-{name}%2estderr"]
    return found


def requests(args: dict) -> list:
    """Every raw request tried: each path with each method, and malformed and forged ones."""
    port = args["port"] or 80
    made = []
    for path in paths(args["ids"], args["names"]):
        for method in ("GET", "HEAD"):
            made.append((f"{method} {path}",
                         f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         f"Connection: close\r\n\r\n".encode()))
    target = f"/games/{args['ids'][0]}.json.gz"
    for method in ("POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH", "CONNECT", "PROPFIND"):
        made.append((f"{method} {target}", f"{method} {target} HTTP/1.1\r\nHost: x\r\n"
                                           f"Content-Length: 0\r\n\r\n".encode()))
    forged = [
        "Cookie: ct-referee-000000000000=" + "A" * 43,
        "Cookie: " + "; ".join(f"ct-referee-{k:012x}=guess" for k in range(20)),
        "Authorization: Bearer " + "A" * 43, "Authorization: Basic YWRtaW46YWRtaW4=",
        "Authorization: Bearer", "X-Forwarded-For: 127.0.0.1", "Host: localhost",
        "Host: evil.example", "Cookie: \x00\x01broken",
    ]
    for header in forged:
        made.append((f"GET {target} with {header[:40]}",
                     f"GET {target} HTTP/1.1\r\n{header}\r\n\r\n".encode("latin-1")))
    made += [
        ("absolute form", f"GET http://127.0.0.1:{port}{target} HTTP/1.1\r\n\r\n".encode()),
        ("HTTP/0.9", f"GET {target}\r\n".encode()),
        ("no version", f"GET {target} \r\n\r\n".encode()),
        ("HTTP/2.0", f"GET {target} HTTP/2.0\r\n\r\n".encode()),
        ("garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64),
        ("long line", b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n"),
        ("many headers", b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n"),
    ]
    return made


def direct(folder: str, ids: list) -> list:
    """The folder, its files and the referee's processes read as this login may."""
    tried = []
    targets = [folder, os.path.join(folder, ".report-key"), os.path.join(folder, ".deal-secret"),
               os.path.join(folder, "results.jsonl")]
    targets += [os.path.join(folder, "games", f"{i}.json.gz") for i in ids]
    for path in targets:
        try:
            if os.path.isdir(path):
                tried.append([path, sorted(os.listdir(path))])
            else:
                with open(path, "rb") as f:
                    tried.append([path, f.read(300).decode("latin-1")])
        except OSError as err:
            tried.append([path, f"{REFUSED_READ}: {err.__class__.__name__}"])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as f:
                    text = f.read().decode("latin-1")
            except OSError:
                continue
            if "key=" in text or ".report-key" in text:
                tried.append([f"/proc/{pid}/{part}", text[:2000]])
    return tried


def main() -> None:
    args = json.loads(sys.argv[1])
    asked = []
    for what, raw in requests(args):
        status, body = ask(args, raw)
        asked.append([what, status, body[:300].decode("latin-1")])
    print(json.dumps({"uid": os.getuid(), "asked": asked,
                      "read": direct(args["folder"], args["ids"])}))


if __name__ == "__main__":
    main()
