#!/usr/bin/python3
"""Per-call overhead of the SDK over a raw HTTP request, for exec.

    PADDOCK_URL=... PADDOCK_API_KEY=... bench/exec_overhead.py [N] [--json]

One sandbox; N rounds, each one exec through raw httpx (the same pooled
client, hand-built JSON) and one through paddock.Sandbox.exec, alternating so
that load drifts hit both alike. Prints the p50 of each and the p50 of the
paired differences (the SDK's overhead). Target: overhead p50 <= 0.3 ms.
Then the same for run_code ("1+1" in the warm default Python context): a
raw POST .../code whose NDJSON is read and parsed to its end event, against
Sandbox.run_code (N/3 rounds)."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import httpx  # noqa: E402

import paddock  # noqa: E402


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 300
    url, key = os.environ["PADDOCK_URL"].rstrip("/"), os.environ["PADDOCK_API_KEY"]
    c = paddock.Paddock(url, key)
    raw = httpx.Client(base_url=url, headers={"Authorization": "Bearer " + key})
    sb = c.sandboxes.create(labels={"bench": "sdk-python"})
    try:
        path = "/v1/sandboxes/%s/exec" % sb.id
        body = json.dumps({"cmd": ["true"]}).encode()
        hdr = {"Content-Type": "application/json"}

        def raw_exec() -> None:
            r = raw.post(path, content=body, headers=hdr)
            assert r.status_code == 200 and json.loads(r.content)["exit_code"] == 0

        def sdk_exec() -> None:
            assert sb.exec(["true"]).exit_code == 0

        for _ in range(20):
            raw_exec()
            sdk_exec()
        t_raw, t_sdk, diff = [], [], []
        for i in range(n):
            order = (raw_exec, sdk_exec) if i % 2 == 0 else (sdk_exec, raw_exec)
            d = {}
            for f in order:
                t0 = time.perf_counter()
                f()
                d[f] = (time.perf_counter() - t0) * 1000
            t_raw.append(d[raw_exec])
            t_sdk.append(d[sdk_exec])
            diff.append(d[sdk_exec] - d[raw_exec])
        res = {"n": n, "raw_p50_ms": statistics.median(t_raw), "sdk_p50_ms": statistics.median(t_sdk),
               "overhead_p50_ms": statistics.median(diff)}
        cpath = "/v1/sandboxes/%s/code" % sb.id
        cbody = json.dumps({"code": "1+1"}).encode()

        def raw_code() -> None:
            r = raw.post(cpath, content=cbody, headers=hdr, timeout=120)
            evs = [json.loads(line) for line in r.content.splitlines() if line.strip()]
            assert r.status_code == 200 and evs[-1]["type"] == "end", evs

        def sdk_code() -> None:
            assert sb.run_code("1+1").text == "2"

        for _ in range(5):
            raw_code()
            sdk_code()
        c_raw, c_sdk, c_diff = [], [], []
        for i in range(max(10, n // 3)):
            order = (raw_code, sdk_code) if i % 2 == 0 else (sdk_code, raw_code)
            d = {}
            for f in order:
                t0 = time.perf_counter()
                f()
                d[f] = (time.perf_counter() - t0) * 1000
            c_raw.append(d[raw_code])
            c_sdk.append(d[sdk_code])
            c_diff.append(d[sdk_code] - d[raw_code])
        res.update({"code_n": len(c_raw), "code_raw_p50_ms": statistics.median(c_raw),
                    "code_sdk_p50_ms": statistics.median(c_sdk), "code_overhead_p50_ms": statistics.median(c_diff)})
        # The SDK's own work, without the network or the sandbox: build the
        # request and decode a real answer, many times.
        answer = raw.post(path, content=body, headers=hdr).content
        m = 20000
        t0 = time.perf_counter()
        for _ in range(m):
            sb._exec_body(["true"], None, None, None, None, None, None)
            paddock._core.dumps({"cmd": ["true"]})
            paddock.models.ExecResponse.from_dict(json.loads(answer))
        res["sdk_cpu_per_call_ms"] = (time.perf_counter() - t0) * 1000 / m
    finally:
        sb.kill()
        c.close()
        raw.close()
    if "--json" in sys.argv:
        print(json.dumps(res))
    else:
        print("exec x%d: raw httpx p50 %.3f ms, SDK p50 %.3f ms, SDK overhead p50 %.3f ms (SDK's own CPU per call %.4f ms)"
              % (n, res["raw_p50_ms"], res["sdk_p50_ms"], res["overhead_p50_ms"], res["sdk_cpu_per_call_ms"]))
        print("run_code x%d: raw httpx p50 %.3f ms, SDK p50 %.3f ms, SDK overhead p50 %.3f ms"
              % (res["code_n"], res["code_raw_p50_ms"], res["code_sdk_p50_ms"], res["code_overhead_p50_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
