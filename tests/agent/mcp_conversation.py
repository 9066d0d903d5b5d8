#!/usr/bin/env python3
"""mcp_conversation.py CAKEC SRC — an MCP client over pipes against `cakec mcp`:
initialize, the initialized notification (no answer), tools/list, a failing
and a passing check (the failing one compared with `cakec check --json`), a
cost sweep, compile excerpts, docs, and JSON-RPC errors. Exits 0 when every
answer is right, 1 with the first wrong one."""
import json, os, subprocess, sys, tempfile

cakec, src = sys.argv[1], sys.argv[2]
proc = subprocess.Popen([cakec, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        text=True, cwd=src)
checks = 0
seen = []   # every line the servers sent

def send(msg):
    proc.stdin.write((msg if isinstance(msg, str) else json.dumps(msg)) + "\n")
    proc.stdin.flush()

def recv():
    line = proc.stdout.readline()
    if not line:
        fail("the server closed stdout")
    seen.append(line)
    return json.loads(line)

def fail(why):
    print("FAIL:", why)
    proc.kill()
    sys.exit(1)

def expect(cond, why):
    global checks
    if not cond:
        fail(why)
    checks += 1

def call(id, name, args):
    send({"jsonrpc": "2.0", "id": id, "method": "tools/call",
          "params": {"name": name, "arguments": args}})
    r = recv()
    expect(r.get("id") == id and "result" in r, f"tools/call {name}: {r}")
    res = r["result"]
    doc = res["structuredContent"]
    expect(json.loads(res["content"][0]["text"]) == doc, f"{name}: text and structuredContent differ")
    return res, doc

send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "test", "version": "0"}}})
r = recv()
expect(r["id"] == 1 and r["result"]["serverInfo"]["name"] == "cakec", f"initialize: {r}")
expect(r["result"]["protocolVersion"] == "2025-06-18", "initialize: protocol version echoed")
expect("tools" in r["result"]["capabilities"], "initialize: tools capability")

send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
r = recv()
expect(r["id"] == 2 and r["result"] == {}, f"the notification got an answer, or ping failed: {r}")

send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
r = recv()
tools = {t["name"]: t for t in r["result"]["tools"]}
expect(set(tools) == {"check", "compile", "cost", "run", "docs", "submit"}, f"tools/list: {list(tools)}")
expect(all(t["inputSchema"]["type"] == "object" for t in tools.values()), "inputSchema objects")

# a failing check: the same document as the CLI's
with open(os.path.join(src, "examples/vector_add.tir")) as f:
    good = f.read()
bad = good.replace("xv[u] + yv[u]", "xv[u] + yq[u]")
fd, badpath = tempfile.mkstemp(suffix=".tir")
os.write(fd, bad.encode())
os.close(fd)
res, doc = call(4, "check", {"file": badpath})
cli = json.loads(subprocess.run([cakec, "check", badpath, "--json"], capture_output=True,
                                text=True).stdout)
os.unlink(badpath)
expect(doc == cli, f"check through mcp differs from the CLI:\n{doc}\n{cli}")
expect(doc["ok"] is False and doc["errors"] >= 1 and doc["diagnostics"][0]["code"].startswith("E"),
       f"failing check: {doc}")
expect(res["isError"] is False, "a failing check is an answer, not a tool error")

res, doc = call(5, "check", {"source": good})
expect(doc == {"command": "check", "ok": True, "errors": 0, "warnings": 0, "diagnostics": []},
       f"passing check: {doc}")

# a cost sweep: `cakec cost --sweep`'s own document, the same as the CLI's; a
# cakec without the cost model (E0004) gets one answer per point instead (every
# point verifies: rmsnorm's VEC=4 does not, `as f32x8`, and would be skipped)
sweep_args = {"file": "examples/rmsnorm.tir", "shape": "M=4096,N=4096", "sweep": "THREADS=128,256 ITERS=4,8"}
res, doc = call(6, "cost", sweep_args)
expect(doc["command"] == "cost" and len(doc["sweep"]) == 4, f"cost sweep: {doc}")
expect(sorted(p["set"] for p in doc["sweep"]) ==
       ["THREADS=128,ITERS=4", "THREADS=128,ITERS=8", "THREADS=256,ITERS=4", "THREADS=256,ITERS=8"],
       "sweep points")
cli = json.loads(subprocess.run([cakec, "cost", "examples/rmsnorm.tir", "--shape", "M=4096,N=4096",
                                 "--sweep", "THREADS=128,256", "ITERS=4,8", "--json"], cwd=src,
                                capture_output=True, text=True).stdout)
if "sweep" in cli:
    expect(doc == cli, f"the sweep differs from the CLI's:\n{doc}\n{cli}")
    expect(all(p["time_ms"] > 0 for p in doc["sweep"]), "predicted times")
else:
    for p in doc["sweep"]:
        expect(p["command"] == "cost" and p["diagnostics"][0]["code"] == "E0004", f"sweep point: {p}")

res, doc = call(7, "compile", {"file": "examples/vector_add.tir", "emit": "tirl", "max_lines": 5})
expect(doc["ok"] is True and doc["emit"] == "tirl" and doc["excerpt"].count("\n") <= 5
       and doc["lines"] > 5, f"compile tirl: {doc}")
res, doc = call(8, "compile", {"file": "examples/vector_add.tir", "target": "sm_80", "grep": ".entry"})
expect(doc["ok"] is True and ".entry" in doc["excerpt"], f"compile ptx: {doc}")

# compile: the whole output with `full`; the kernels' resources; check with shape/set;
# spans of a `source` answer name the user's `file`, never the temporary
res, doc = call(40, "compile", {"file": "examples/vector_add.tir", "target": "sm_90a", "full": True})
expect(doc["ok"] is True and ".entry vector_add" in doc["output"] and "excerpt" not in doc
       and doc["lines"] == doc["output"].count("\n"), f"compile full: {str(doc)[:400]}")
expect("kernels" in doc and (doc["kernels"] == [] or doc["kernels"][0]["name"] == "vector_add"),
       f"compile resources: {str(doc)[:400]}")
res, doc = call(41, "check", {"file": "examples/rmsnorm.tir", "shape": "M=64,N=4096", "set": "ITERS=4"})
expect(doc["ok"] is True, f"check with shape and set: {doc}")
res, doc = call(42, "check", {"file": "examples/rmsnorm.tir", "shape": "M=64,N=100000"})
expect(doc["ok"] is False and doc["diagnostics"][0]["code"] == "E0961", f"check at a shape an assume excludes: {doc}")
res, doc = call(43, "check", {"source": bad, "file": "my_kernel.tir"})
spans = [d["span"]["file"] for d in doc["diagnostics"] if d.get("span")]
expect(doc["ok"] is False and spans and all(f == "my_kernel.tir" for f in spans)
       and "cand_" not in json.dumps(doc), f"spans name the user's file: {doc}")
res, doc = call(44, "check", {"source": bad})
expect(all(d["span"]["file"] == "<source>" for d in doc["diagnostics"] if d.get("span")),
       f"spans of a bare source: {doc}")
res, doc = call(45, "compile", {"file": "examples/rmsnorm.tir", "shape": "M=64,N=100000", "target": "sm_90a"})
expect(doc["ok"] is False and doc["command"] == "check", f"compile checks at its shape first: {str(doc)[:300]}")
res, doc = call(46, "cost", {"file": "examples/gemm_sm90.tir", "sweep": "STAGES=2,8"})
pts = doc["sweep"]
expect(pts[-1]["set"].startswith("STAGES=8") and pts[-1]["feasible"] is False
       and "shared memory" in pts[-1]["infeasible"] and pts[0]["feasible"] is True,
       f"an unlaunchable point is infeasible and last: {str(doc)[:600]}")

res, doc = call(9, "docs", {"topic": "E0801"})
expect(doc["ok"] and doc["text"].startswith("### E0801"), f"docs: {doc}")
res, doc = call(10, "docs", {"topic": "no such construct at all"})
expect(doc["ok"] is False, "docs: unknown topic")
res, doc = call(11, "nosuchtool", {})
expect(res["isError"] is True, "unknown tool is a tool error")

send({"jsonrpc": "2.0", "id": 12, "method": "no/such/method"})
r = recv()
expect(r["id"] == 12 and r["error"]["code"] == -32601, f"unknown method: {r}")
send("{not json")
r = recv()
expect(r["id"] is None and r["error"]["code"] == -32700, f"parse error: {r}")

proc.stdin.close()
expect(proc.wait(timeout=30) == 0, "the server exits 0 at the end of its input")

# with a task: run checks on the visible shapes against the trusted reference;
# submit gives the held-out verdict without the held-out shape (GPU steps faked)
env = dict(os.environ, CAKEC=cakec, CAKE_RUN_CMD=os.path.join(src, "tests/agent/fake_cakec.sh"))
proc = subprocess.Popen([cakec, "mcp", "--task", "tests/agent/task_vector_add.json"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=src, env=env)
res, doc = call(20, "run", {"source": good})
expect(doc["ok"] is True and len(doc["runs"]) == 2, f"task run: {doc}")
expect(all("--reference" in r["argv"] and "vector_add.tir" in r["argv"] for r in doc["runs"]), doc)
expect("N=1000000" in doc["runs"][0]["argv"] and "N=4097" in doc["runs"][1]["argv"], doc)
res, doc = call(21, "run", {"source": good, "check": False, "bench": True})
expect(doc["ok"] and len(doc["runs"]) == 1 and "N=268435456" in doc["runs"][0]["argv"], doc)
res, doc = call(22, "submit", {"source": good})
expect(doc["command"] == "submit" and doc["ok"] and doc["verdict"] ==
       {"held_out": "pass", "passed": 1, "total": 1}, f"submit: {doc}")
res, doc = call(23, "submit", {"source": bad})
expect(doc["ok"] is False and "verdict" not in doc, f"submit of a broken kernel: {doc}")
proc.stdin.close()
out = proc.stdout.read()
expect(proc.wait(timeout=30) == 0 and "12345" not in out + "".join(seen[-4:]),
       "the held-out shape stays hidden")
print(f"{checks} passed, 0 failed")
