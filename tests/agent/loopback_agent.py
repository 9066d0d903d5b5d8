#!/usr/bin/env python3
"""loopback_agent.py CAKEC SRC — `cakec agent` against loopback.py, with the
GPU steps (`run`) from fake_cakec.sh. Two scripted runs:
  openai, plain mode: 429, 500 and a timeout (retried), malformed JSON, a reply
    with no code, invalid IR (diagnostics back), the fixed IR (check passes):
    the run converges; the trajectory, the report and the lessons are checked;
  anthropic, tool mode: tool_use check on invalid IR, then check and submit of
    the fixed kernel in one reply (tool_result blocks, submit ends the run).
The API key must reach the server and appear in no file or output."""
import json, os, re, subprocess, sys, tempfile, time

cakec, src = sys.argv[1], sys.argv[2]
here = os.path.join(src, "tests", "agent")
KEY = "sk-test-loopback-0123456789"
tmp = tempfile.mkdtemp()
checks = 0

def expect(cond, why):
    global checks
    if not cond:
        print("FAIL:", why)
        sys.exit(1)
    checks += 1

good = open(os.path.join(src, "examples", "vector_add.tir")).read()
bad = good.replace("xv[u] + yv[u]", "xv[u] + yq[u]")

def serve(name, script):
    sp, pf, lf = (os.path.join(tmp, name + s) for s in (".script.json", ".port", ".log"))
    json.dump(script, open(sp, "w"))
    srv = subprocess.Popen([sys.executable, os.path.join(here, "loopback.py"), sp, pf, lf])
    for _ in range(200):
        if os.path.exists(pf):
            break
        time.sleep(0.05)
    return srv, int(open(pf).read()), lf

def agent(name, port, path, extra, task=os.path.join(here, "task_vector_add.json")):
    out = os.path.join(tmp, name)
    env = dict(os.environ, CAKE_RUN_CMD=os.path.join(here, "fake_cakec.sh"), CAKEC=cakec,
               TEST_KEY=KEY, CAKE_LESSONS=os.path.join(tmp, "lessons.json"))
    args = [cakec, "agent", task, "--endpoint",
            f"http://127.0.0.1:{port}{path}", "--model", "test-model", "--key-env", "TEST_KEY",
            "--out", out, "--http-timeout", "1", "--retries", "3", "--backoff", "0.01",
            "--docs", os.path.join(src, "docs")] + extra
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    return p, out

def log(lf):
    return [json.loads(l) for l in open(lf)]

def no_key_in(out, p):
    for f in os.listdir(out):
        expect(KEY not in open(os.path.join(out, f)).read(), f"the key is in {f}")
    expect(KEY not in p.stdout and KEY not in p.stderr, "the key is in the output")

def openai_reply(content, **extra):
    msg = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
    return {"status": 200, "json": {"id": "x", "object": "chat.completion", "system_fingerprint": "fp",
            "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                      "prompt_tokens_details": {"cached_tokens": 0}}, **extra}}

# ---- 1. openai, plain mode --------------------------------------------------------------
script = [
    {"status": 429, "json": {"error": {"message": "rate limited", "type": "rate_limit"}}},
    {"status": 500, "body": "internal error"},
    {"status": 200, "delay": 3, "json": {"late": True}},
    {"status": 200, "body": "{\"choices\": [ {\"message\": "},
    openai_reply("I think the kernel should add the vectors."),
    openai_reply("Here it is:\n```tir\n" + bad + "```\n"),
    openai_reply("Fixed the name:\n```tir\n" + good + "```\n"),
]
srv, port, lf = serve("openai", script)
p, out = agent("openai", port, "/v1/chat/completions", ["--plain", "--iterations", "4"])
srv.kill()
expect(p.returncode == 0, f"exit {p.returncode}\n{p.stderr}\n{p.stdout}")
reqs = log(lf)
expect(len(reqs) == 7, f"{len(reqs)} requests")
expect(all(r["headers"].get("Authorization") == "Bearer " + KEY for r in reqs), "Bearer key header")
b0 = reqs[0]["body"]
expect(b0["model"] == "test-model" and b0["messages"][0]["role"] == "system"
       and "TIR" in b0["messages"][0]["content"] and "tools" not in b0, "openai plain request")
expect("12345" not in b0["messages"][0]["content"], "a held-out shape reached the prompt")
expect(reqs[0]["body"] == reqs[3]["body"], "a retry resends the same request")
last = reqs[6]["body"]["messages"]
expect("no ```tir block" in json.dumps(last), "the no-code feedback reached the model")
fb = last[-1]["content"]
expect(last[-1]["role"] == "user" and "Candidate #1 is invalid" in fb and '"code":"E' in fb,
       f"the diagnostics feedback: {fb[:300]}")
lines = [l for l in p.stderr.splitlines() if l.startswith("agent: iter ")]
expect(len(lines) == 4 and lines[0].startswith("agent: iter 1/4") and "malformed" in lines[0],
       f"progress lines: {lines}")
expect("candidate #2 correct" in lines[3] and "1.0000 ms" in lines[3], f"last progress line: {lines[3]}")
rep = json.load(open(os.path.join(out, "report.json")))
expect(rep["stopped"] == "iterations" and rep["iterations"] == 4 and rep["candidates"] == 2, rep)
expect(rep["best"]["id"] == 2 and rep["best"]["status"] == "correct" and rep["best"]["ms"] == 1.0, rep)
expect(abs(rep["speedup"] - 1.25) < 1e-9 and rep["held_out"] == "pass" and rep["held_out_total"] == 1, rep)
expect(open(os.path.join(out, "best.tir")).read() == good, "best.tir is the fixed kernel")
traj = [json.loads(l) for l in open(os.path.join(out, "trajectory.jsonl"))]
kinds = [e["event"] for e in traj]
expect(kinds == ["start", "error", "reply", "no_code", "reply", "candidate", "reply", "candidate", "end"],
       f"trajectory: {kinds}")
expect(traj[1]["code"] == "E1106", traj[1])
cands = [e for e in traj if e["event"] == "candidate"]
expect(cands[0]["status"] == "invalid" and cands[0]["codes"] and cands[1]["status"] == "correct", cands)
expect(traj[2]["tokens_in"] == 100 and rep["tokens"] == 360, "token counts")
no_key_in(out, p)
lessons = json.load(open(os.path.join(tmp, "lessons.json")))
fam = lessons["families"]["elementwise"]
code = cands[0]["codes"][0]
expect(fam["runs"] == 1 and fam["codes"][code]["seen"] == 1 and fam["codes"][code]["fixed"] == 1, fam)
expect("yq" in fam["codes"][code]["fixes"][0]["before"] and "yv" in fam["codes"][code]["fixes"][0]["after"], fam)
s = subprocess.run([cakec, "lessons", os.path.join(tmp, "lessons.json")], capture_output=True, text=True)
expect(s.returncode == 0 and f"- {code}: seen 1 times, fixed 1 times" in s.stdout, s.stdout)

# ---- 2. anthropic, tool mode ---------------------------------------------------------------
def anthropic_reply(blocks):
    return {"status": 200, "json": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "test-model", "content": blocks, "stop_reason": "tool_use",
            "usage": {"input_tokens": 50, "output_tokens": 10, "cache_read_input_tokens": 0}}}

script = [
    anthropic_reply([{"type": "thinking", "thinking": "hmm", "signature": "s"},
                     {"type": "text", "text": "Let me check it."},
                     {"type": "tool_use", "id": "tu_1", "name": "check", "input": {"source": bad}}]),
    anthropic_reply([{"type": "tool_use", "id": "tu_2", "name": "check", "input": {"source": good}},
                     {"type": "tool_use", "id": "tu_3", "name": "submit", "input": {"source": good}}]),
]
# this task has a baseline command and no baseline time: the agent runs it once
task = json.load(open(os.path.join(here, "task_vector_add.json")))
task["reference"] = os.path.join(src, "examples", "vector_add.tir")
task["baseline"] = {"command": "echo '{\"command\":\"run\",\"bench\":{\"median_ms\":2.0}}'"}
task_path = os.path.join(tmp, "task_baseline.json")
json.dump(task, open(task_path, "w"))
srv, port, lf = serve("anthropic", script)
p, out = agent("anthropic", port, "/v1/messages", ["--api", "anthropic", "--iterations", "5", "--json"],
               task_path)
srv.kill()
expect(p.returncode == 0, f"exit {p.returncode}\n{p.stderr}\n{p.stdout}")
reqs = log(lf)
expect(len(reqs) == 2, f"{len(reqs)} requests")
h = reqs[0]["headers"]
expect(h.get("x-api-key") == KEY and h.get("anthropic-version"), "anthropic headers")
b = reqs[0]["body"]
expect("TIR" in b["system"] and b["max_tokens"] > 0 and b["tools"][0]["input_schema"]["type"] == "object"
       and b["messages"][0]["role"] == "user", "anthropic request")
m = reqs[1]["body"]["messages"]
expect(m[1]["role"] == "assistant" and m[1]["content"][0]["type"] == "thinking", "assistant turn kept as is")
res = m[2]["content"][0]
expect(m[2]["role"] == "user" and res["type"] == "tool_result" and res["tool_use_id"] == "tu_1"
       and '"ok":false' in res["content"], f"tool_result: {res}")
doc = json.loads(p.stdout)
expect(doc["command"] == "agent" and doc["ok"] and doc["stopped"] == "submitted", doc)
expect(doc["best"]["status"] == "correct" and doc["held_out"] == "pass" and doc["candidates"] == 2, doc)
expect(doc["baseline_ms"] == 2.0 and doc["speedup"] == 2.0, f"the measured baseline: {doc}")
traj = [json.loads(l) for l in open(os.path.join(out, "trajectory.jsonl"))]
expect(traj[1]["event"] == "baseline" and traj[1]["ms"] == 2.0, traj[1])
expect(re.search(r'"baseline_ms":\s*2\b', b["system"]), "the prompt shows the measured baseline")
no_key_in(out, p)
fam = json.load(open(os.path.join(tmp, "lessons.json")))["families"]["elementwise"]
expect(fam["runs"] == 2 and fam["codes"][code]["seen"] == 2, fam)

# ---- 2b. openai, tool mode: a reply with a ```tir block and no tool call is a
# candidate too; then a tool call (OpenAI's function arguments are a JSON string)
script = [
    openai_reply("Here is my kernel:\n```tir\n" + good + "```"),
    {"status": 200, "json": {"choices": [{"message": {"role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "submit",
                        "arguments": json.dumps({"source": good})}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}},
]
srv, port, lf = serve("openai_tools", script)
p, out = agent("openai_tools", port, "/v1/chat/completions", ["--iterations", "4", "--json"])
srv.kill()
doc = json.loads(p.stdout)
expect(p.returncode == 0 and doc["stopped"] == "submitted" and doc["candidates"] == 1, f"{doc}\n{p.stderr}")
reqs = log(lf)
expect(reqs[0]["body"]["tools"][0]["type"] == "function" and "parameters" in reqs[0]["body"]["tools"][0]["function"],
       "openai tools")
m = reqs[1]["body"]["messages"]
expect(m[-1]["role"] == "user" and "Candidate #1 is correct" in m[-1]["content"], m[-1])

# ---- 3. no key: E1107; an endpoint that refuses: E1105 then E1111 ------------------------
env = dict(os.environ)
env.pop("NO_SUCH_KEY_VAR", None)
q = subprocess.run([cakec, "agent", os.path.join(here, "task_vector_add.json"), "--model", "m",
                    "--key-env", "NO_SUCH_KEY_VAR", "--json"], capture_output=True, text=True, env=env)
expect(q.returncode == 1 and json.loads(q.stdout)["diagnostics"][0]["code"] == "E1107", q.stdout)
srv, port, lf = serve("refused", [{"status": 401, "json": {"error": {"message": "bad key"}}}])
p, out = agent("refused", port, "/v1/chat/completions", ["--iterations", "3", "--json"])
srv.kill()
doc = json.loads(p.stdout)
expect(p.returncode == 1 and doc["diagnostics"][0]["code"] == "E1111" and len(log(lf)) == 1
       and "refused" in doc["stopped"], f"refused: {p.stdout} {p.stderr}")
expect("HTTP 401" in p.stderr or "request failed" in p.stderr, p.stderr)
print(f"{checks} passed, 0 failed")
