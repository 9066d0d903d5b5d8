#!/usr/bin/env python3
"""bugs.py — the planted-bug corpus of Trust II, as data: one line changed in one
example each. `python3 tests/corpus/bugs.py` writes tests/corpus/<example>/<name>.tir
(the files CI and the device script run), each with a header:

    # corpus: static E0741 at 57       (check must report E0741; the bug is line 57;
                                       "at 57 deleted": the line deleted stood before line 57)
    # corpus: dynamic                  (check passes; the default `run --check` must fail)
    # bug: what the kernel does wrong on a GPU

Entries: (example, name, find, replace, expected, what); the example is a name in
examples/ or a path without .tir (library/kernels/gemm_splitk_fused). `find` occurs once in the
example (the first occurrence is changed when `nth` says so); `replace` may be ""
(the line is deleted). `expected` is a diagnostic code (static) or "dynamic".
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

B = [
    # ---- vector_add ------------------------------------------------------------------
    ("vector_add", "load_mask_past_end", "xv[u] = load x[i : +VEC] mask i + VEC <= N",
     "xv[u] = load x[i : +VEC] mask i <= N", "E0801",
     "the load mask lets the vector that straddles N read up to VEC - 1 elements past x"),
    ("vector_add", "store_unmasked", "store z[i : +VEC] <- xv[u] + yv[u] mask i + VEC <= N",
     "store z[i : +VEC] <- xv[u] + yv[u]", "E0801",
     "the vector store has no mask: the last block writes past the end of z"),
    ("vector_add", "tail_subtracts", "store z[e] <- load x[e] + load y[e]",
     "store z[e] <- load x[e] - load y[e]", "dynamic",
     "the ragged tail computes x - y: the last N % VEC elements are wrong"),
    ("vector_add", "tail_skips_first", "for e in i .. N {", "for e in i + 1 .. N {", "E0820",
     "the ragged tail starts one element late: element i of the straddling vector is never written"),
    ("vector_add", "grid_floor", "grid [cdiv(N, THREADS * VEC * UNROLL)]",
     "grid [N / (THREADS * VEC * UNROLL)]", "E0820",
     "the grid rounds down: the last partial tile has no block, its elements are never written"),
    ("vector_add", "load_unscaled_index", "    let i = base + (u * THREADS + thread.x) * VEC\n    xv[u]",
     "    let i = base + (u * THREADS + thread.x)\n    xv[u]", "E0810",
     "the load index is not scaled by VEC: misaligned 16-byte loads of overlapping, wrong elements"),
    # ---- copy ------------------------------------------------------------------------
    ("copy", "store_shifted", "    let i = base + (u * THREADS + thread.x) * VEC\n    store",
     "    let i = base + (u * THREADS + thread.x + 1) * VEC\n    store", "E0820",
     "the store index is one vector ahead: element 0 of each tile is never written, each vector lands one slot late"),
    ("copy", "store_first_vector", "store dst[i : +VEC] <- v[u] mask i + VEC <= N",
     "store dst[i : +VEC] <- v[0] mask i + VEC <= N", "dynamic",
     "every store writes the first loaded vector: dst holds copies of the wrong data"),
    ("copy", "half_grid", "grid [cdiv(N, THREADS * VEC * UNROLL)]", "grid [cdiv(N, THREADS * VEC * UNROLL * 2)]",
     "E0820", "half as many blocks as tiles: the second half of dst is never written"),
    ("copy", "load_unmasked", "v[u] = load src[i : +VEC] mask i + VEC <= N", "v[u] = load src[i : +VEC]",
     "E0801", "the load has no mask: the last block reads past the end of src"),
    # ---- rmsnorm ---------------------------------------------------------------------
    ("rmsnorm", "eps_outside_rsqrt", "let r = rsqrt(reduce.block.add(ss) / f32(N) + eps)",
     "let r = rsqrt(reduce.block.add(ss) / f32(N)) + eps", "dynamic",
     "eps is added after the rsqrt: every output is off by eps * x * w"),
    ("rmsnorm", "load_unmasked", "xs[it] = load x[block.x, i : +VEC] as f32x8 mask i < N",
     "xs[it] = load x[block.x, i : +VEC] as f32x8", "E0801",
     "the row load has no mask: threads past the row end read the next row (and past x on the last)"),
    ("rmsnorm", "store_guard_le", "    if i < N {\n      let wv", "    if i <= N {\n      let wv", "E0801",
     "the store guard admits i == N: a vector is written past the row end"),
    ("rmsnorm", "mean_over_threads", "let r = rsqrt(reduce.block.add(ss) / f32(N) + eps)",
     "let r = rsqrt(reduce.block.add(ss) / f32(THREADS) + eps)", "dynamic",
     "the mean of squares divides by the thread count, not N: every output is scaled wrong"),
    ("rmsnorm", "sum_not_initialised", "var ss: f32 = 0", "var ss: f32", "E0764",
     "the sum of squares starts from an undefined register: garbage in every row"),
    ("rmsnorm", "weight_first_vector", "let wv = load w[i : +VEC] as f32x8", "let wv = load w[0 : +VEC] as f32x8",
     "dynamic", "every vector is scaled by the first VEC weights"),
    # ---- layernorm -------------------------------------------------------------------
    ("layernorm", "padding_in_variance", "s2 += select(i < N, dot(d, d), 0.0)", "s2 += dot(d, d)", "dynamic",
     "the zero-filled lanes past the row end add mu^2 each to the variance (ragged rows only)"),
    ("layernorm", "weight_bias_swapped", "fma((xs[it] - mu) * r, wv, bv)", "fma((xs[it] - mu) * r, bv, wv)",
     "dynamic", "weight and bias are swapped in the affine step"),
    ("layernorm", "mean_not_reduced", "let mu = reduce.block.add(s1) / f32(N)", "let mu = s1 / f32(N)",
     "dynamic", "each thread centres with its own partial sum, not the row mean"),
    ("layernorm", "bias_next_vector", "let bv = load b[i : +VEC] as f32x8", "let bv = load b[i + VEC : +VEC] as f32x8",
     "E0801", "the bias is read one vector ahead: the last vector reads past b"),
    ("layernorm", "assume_too_long", "assume N <= THREADS * VEC * ITERS", "assume N <= 2 * THREADS * VEC * ITERS",
     "E0820", "the assume admits rows twice as long as the registers hold: their second half is never written"),
    # ---- softmax ---------------------------------------------------------------------
    ("softmax", "padding_zero_not_inf", "xs[it] = select(i < N, load x[block.x, i : +4] mask i < N, -inf)",
     "xs[it] = select(i < N, load x[block.x, i : +4] mask i < N, 0.0)", "dynamic",
     "padding lanes are 0, not -inf: they can win the max and add exp(-max) each to the sum"),
    ("softmax", "sum_not_reduced", "let rl = 1.0 / reduce.block.add(l)", "let rl = 1.0 / l", "dynamic",
     "each thread normalises by its own partial sum: rows do not sum to 1"),
    ("softmax", "store_unmasked", "    store y[block.x, i : +4] <- xs[it] * rl mask i < N",
     "    store y[block.x, i : +4] <- xs[it] * rl", "E0801",
     "the store has no mask: threads past the row end write into the next row (past y on the last)"),
    ("softmax", "warp_row_guard_le", "if row < M {", "if row <= M {", "E0801",
     "softmax_warp: the row guard admits row == M, one row past x and y"),
    ("softmax", "warp_max_not_reduced", "let ms = reduce.warp.max(mx) * LOG2E", "let ms = mx * LOG2E", "dynamic",
     "softmax_warp: each lane uses its own max: the exponentials are scaled per lane"),
    # ---- cross_entropy ---------------------------------------------------------------
    ("cross_entropy", "two_writers", "if thread.x == 0 {", "if thread.x < 2 {", "E0821",
     "two threads store the same loss element: a write-write race"),
    ("cross_entropy", "sum_unshifted", "s += exp(load logits[block.x, v] - m)", "s += exp(load logits[block.x, v])",
     "dynamic", "the sum of exponentials is not shifted by the max but the log-sum-exp adds the max: loss off by m"),
    ("cross_entropy", "max_loop_skips", "  for v in thread.x .. V step THREADS {\n    mx",
     "  for v in thread.x + 1 .. V step THREADS {\n    mx", "dynamic",
     "the max loop starts one element late per thread: column 0 never enters the max"),
    ("cross_entropy", "target_next", "store loss[block.x] <- m + log(l) - load logits[block.x, t]",
     "store loss[block.x] <- m + log(l) - load logits[block.x, t + 1]", "E0801",
     "the target logit is read one column late: past the row when the target is the last class"),
    # ---- gemm_sm90 -------------------------------------------------------------------
    ("gemm_sm90", "release_current_stage", "      ring.release(prev)                              # ... so",
     "      ring.release(s)                              # ... so", "E0741",
     "the stage whose wgmma is still running is released: the producer refills it under the tensor cores"),
    ("gemm_sm90", "wait_too_lax", "wgmma.wait 1                                    # k-tile",
     "wgmma.wait 2                                    # k-tile", "E0741",
     "two groups stay in flight, but the previous stage is released: its wgmma may still read it"),
    ("gemm_sm90", "no_final_wait", "    wgmma.wait 0\n    ring.release(prev)\n",
     "    ring.release(prev)\n", "E0741",
     "the last stage is released and the accumulator stored while the last wgmma may still run"),
    ("gemm_sm90", "no_proxy_fence", "      fence.proxy.async                               # generic", "",
     "E0725", "stmatrix writes reach the TMA engine unfenced: the store can read stale shared memory"),
    ("gemm_sm90", "store_wait_lax", "      tma.store.wait 1                                # the store",
     "      tma.store.wait 2                                # the store", "E0726",
     "the staging buffer is overwritten while the TMA store that reads it may still run"),
    ("gemm_sm90", "barrier_count_block", "      barrier 1 + wg, 128                             # ... and",
     "      barrier 1 + wg, 256                             # ... and", "E0751",
     "a warpgroup barrier waits for 256 threads but only its 128 arrive: deadlock"),
    ("gemm_sm90", "token_not_moved", "      prev = s\n", "", "E0702",
     "the carried token is never advanced: the same stage is released every iteration, the others never"),
    ("gemm_sm90", "group_ignores_partial", "let bn = block.x % width / gm * BN", "let bn = block.x % width / GROUP_M * BN",
     "E0820", "the column of a tile ignores the partial last group: its tiles are skipped or stored twice"),
    ("gemm_sm90", "b_tile_one_ahead", "tma Bs[s] <- B[bn, k * BK] on ring.full(s)",
     "tma Bs[s] <- B[bn, k * BK + BK] on ring.full(s)", "dynamic",
     "B is loaded one k-tile ahead: every product pairs A's k-tile with B's next one"),
    ("gemm_sm90", "consumer_range_short", "role consumer: warpgroups 1 .. 3", "role consumer: warpgroups 1 .. 2",
     "E0820", "the consumer role leaves warpgroup 2 out (the end is excluded): half of every tile's rows stay unwritten"),
    # ---- gemm_sm90_persistent --------------------------------------------------------
    ("gemm_sm90_persistent", "consumer_stride_literal",
     "    for t in block.x .. NT step grid.x {              # this block's tiles",
     "    for t in block.x .. NT step 132 {              # this block's tiles", "E0820",
     "the consumer's tile loop steps by a literal SM count: on other SM counts it walks other tiles than the producer"),
    ("gemm_sm90_persistent", "consumer_group_partial",
     "      let gm = min(tm - first, GROUP_M)\n      let bm = (first + t % width % gm) * BM\n      let bn = t % width / gm * BN\n      acc = 0",
     "      let gm = GROUP_M\n      let bm = (first + t % width % gm) * BM\n      let bn = t % width / gm * BN\n      acc = 0",
     "E0820", "the consumer ignores the partial last group: tiles of the last group are stored in the wrong places"),
    ("gemm_sm90_persistent", "no_store_drain", "    tma.store.wait 0                                  # shared memory must outlive", "",
     "E0726", "the block exits with TMA stores still reading its shared memory"),
    ("gemm_sm90_persistent", "store_wait_removed", "        tma.store.wait 1                              # the store", "",
     "E0726", "the staging buffer is rewritten while an earlier tile's TMA store may still read it"),
    ("gemm_sm90_persistent", "acc_not_cleared", "      acc = 0                                         # a new tile\n", "",
     "E0764", "the accumulator is never cleared: the first tile adds to garbage, each later tile to the previous one"),
    ("gemm_sm90_persistent", "carried_token_zero", "var prev: i32 = s0", "var prev: i32 = 0", "E0704",
     "the carried token starts at stage 0, not the stage waited for: the wrong stage is released"),
    # ---- gemm_bias_act ---------------------------------------------------------------
    ("gemm_bias_act", "bias_unmasked", "bv[r, c] = load bias[c0 + c] mask c0 + c >= 0 && c0 + c < N",
     "bv[r, c] = load bias[c0 + c]", "E0801", "the bias load has no mask: the ragged last tile reads past bias"),
    ("gemm_bias_act", "silu_sign", "/ (1.0 + exp(-acc[:, j * 64 : +64]))", "/ (1.0 + exp(acc[:, j * 64 : +64]))",
     "dynamic", "SiLU with the wrong sign: x * sigmoid(-x)"),
    ("gemm_bias_act", "bias_column_zero", "let c0 = bn + j * 64", "let c0 = bn", "dynamic",
     "every 64-column slice adds the bias of the tile's first 64 columns"),
    ("gemm_bias_act", "second_barrier_dropped", "      barrier 1 + wg, 128                             # every writer", "",
     "E0762", "the TMA store is issued before every thread's stmatrix and fence: it reads a half-written tile"),
    # ---- gemm_fp8 --------------------------------------------------------------------
    ("gemm_fp8", "scale_dropped", "stmatrix Cs[wg, j % 2] <- bf16(acc[:, j * 64 : +64] * scale)",
     "stmatrix Cs[wg, j % 2] <- bf16(acc[:, j * 64 : +64])", "dynamic",
     "the dequantization scales are never applied"),
    ("gemm_fp8", "b_unswizzled", "shared Bs: e4m3[STAGES, BN, BK] swizzle 128", "shared Bs: e4m3[STAGES, BN, BK]",
     "E0339", "the fp8 B tile is not swizzled: the wgmma descriptor and the TMA layout disagree"),
    ("gemm_fp8", "release_current", "      ring.release(prev)                              # ... so",
     "      ring.release(s)                              # ... so", "E0741",
     "the stage under the running wgmma is released and refilled"),
    ("gemm_fp8", "k_tiles_floor", "let KT = cdiv(K, BK)", "let KT = K / BK", "E0705",
     "the k-tile count rounds down: a ragged K drops the last partial k-tile (for K < 128 the consumer waits for a stage nobody fills)"),
    # ---- gemm_sm80 -------------------------------------------------------------------
    ("gemm_sm80", "cp_wait_lax", "cp.async.wait STAGES - 2", "cp.async.wait STAGES - 1", "E0730",
     "the wait lets the copies of the current tile stay in flight: the mma reads unwritten shared memory"),
    ("gemm_sm80", "no_sync_after_wait", "    sync                                      # ... everyone's too", "",
     "E0731", "no barrier after the wait: threads read other threads' copies before they land"),
    ("gemm_sm80", "k_mask_dropped", "cp.async As[st, r, col : +8] <- A[bm + r, st * BK + col : +8] mask st * BK + col < K && bm + r < M",
     "cp.async As[st, r, col : +8] <- A[bm + r, st * BK + col : +8] mask bm + r < M", "E0801",
     "the prologue's A copies are not masked in K: a short K reads past A's rows"),
    ("gemm_sm80", "epilogue_mask_n", "mask bm + wm + r < M && bn + wn + c < N", "mask bm + wm + r < M", "E0801",
     "the edge epilogue does not mask N: the ragged last tile writes past C's rows"),
    ("gemm_sm80", "refill_current_slot", "let ns = nk % STAGES", "let ns = kt % STAGES", "E0730",
     "the refill goes into the slot the mma is about to read"),
    ("gemm_sm80", "commit_dropped", "    cp.async.commit                           # always one group", "",
     "E0730", "the loop's copies are never committed as their own group: the wait count covers the wrong copies"),
    # ---- flash_attn_fwd --------------------------------------------------------------
    ("flash_attn_fwd", "sum_not_rescaled", "li = li * alpha + rowsum(sacc)", "li = li + rowsum(sacc)", "dynamic",
     "the running row sum is not rescaled when the row max grows: rows are divided by too large a sum"),
    ("flash_attn_fwd", "pv_wait_lax", "wgmma.wait 0                                     # PV_{j-1} retired",
     "wgmma.wait 1                                     # PV_{j-1} retired", "E0740",
     "o is rescaled and p overwritten while the P V wgmma may still read and write them"),
    ("flash_attn_fwd", "release_current", "      kv.release(prev)\n      o = o * alpha",
     "      kv.release(s)\n      o = o * alpha", "E0708",
     "the stage whose V the next P V wgmma reads is released: the producer refills it first"),
    ("flash_attn_fwd", "q_wait_parity", "mbarrier.wait qbar, 0", "mbarrier.wait qbar, 1", "E0765",
     "the wait on the Q tile's barrier uses parity 1: it passes before the Q bytes land (or never)"),
    ("flash_attn_fwd", "q_bytes_half", "mbarrier.expect_tx qbar, BM * 128 * 2", "mbarrier.expect_tx qbar, BM * 64 * 2",
     "E0707", "the Q barrier expects half the bytes its TMA brings: it completes early or breaks the tx count"),
    ("flash_attn_fwd", "causal_blocks_short", "let nb = select(CAUSAL == 1, cdiv(min(S, m0 + BM), BN), cdiv(S, BN))",
     "let nb = select(CAUSAL == 1, cdiv(min(S, m0), BN), cdiv(S, BN))", "E0705",
     "under CAUSAL=1 the diagonal KV block is skipped: every query row misses its nearest keys"),
    # ---- flash_attn_fwd_d64 ----------------------------------------------------------
    ("flash_attn_fwd_d64", "scale_not_log2", "let scale = sm_scale * 1.4426950408889634", "let scale = sm_scale",
     "dynamic", "exp2 is fed natural-log scores: the softmax temperature is off by log2(e)"),
    ("flash_attn_fwd_d64", "first_block_unmasked", "if BN > S || (CAUSAL == 1 && BN > r0) {", "if BN > S {",
     "dynamic", "under CAUSAL=1 the first KV block is not masked: rows see keys from their future"),
    # ---- flash_attn_fwd_pp (the persistent ping-pong) --------------------------------------
    ("flash_attn_fwd_pp", "pingpong_wait_removed",
     "        barrier 1 + wg, 256\n        wgmma sacc =", "        wgmma sacc =", "E0754",
     "the loop no longer waits for its turn: the other warpgroup's hand-overs complete phases nobody waits on"),
    ("flash_attn_fwd_pp", "pingpong_arrive_removed",
     "        barrier.arrive 2 - wg, 256\n        wgmma.wait 1", "        wgmma.wait 1", "E0751",
     "the loop never hands the turn over: each warpgroup's next wait never opens (deadlock)"),
    ("flash_attn_fwd_pp", "first_turn_not_given", "      barrier.arrive 1, 256                            # the first turn",
     "      barrier.arrive 1, 128                            # the first turn", "E0751",
     "the first hand-over counts 128 threads where warpgroup 0's wait counts 256: one phase, two counts"),
    ("flash_attn_fwd_pp", "o_not_cleared", "      o = 0\n", "",
     "E0764", "the accumulator is not cleared per tile: a block's second tile adds to the first's O"),
    # ---- flash_attn_fwd_pp: ping-pong named barriers, GQA (the second session) -------------
    ("flash_attn_fwd_pp", "pingpong_count_128", "        barrier 1 + wg, 256\n        wgmma sacc = Qs[sq][wg * 64 : +64, :] * Ks[ks]^T",
     "        barrier 1 + wg, 128\n        wgmma sacc = Qs[sq][wg * 64 : +64, :] * Ks[ks]^T", "E0751",
     "the loop's turn wait counts 128 where the other warpgroup's hand-over counts 256: the wait "
     "completes on its own warpgroup's arrivals (no turn-taking) and the phase counts disagree"),
    ("flash_attn_fwd_pp", "pingpong_arrive_own_id", "        barrier.arrive 2 - wg, 256\n        wgmma.wait 1",
     "        barrier.arrive 1 + wg, 256\n        wgmma.wait 1", "E0751",
     "the loop hands the turn to itself (its own barrier id): the other warpgroup's next wait never opens (deadlock)"),
    ("flash_attn_fwd_pp", "epilogue_id_collides", "      fence.proxy.async                                # generic writes -> TMA (async proxy) reads\n      barrier 3 + wg, 128",
     "      fence.proxy.async                                # generic writes -> TMA (async proxy) reads\n      barrier 1 + wg, 128", "E0751",
     "the epilogue's barrier uses the ping-pong id 1 + wg with count 128 where the turn-taking counts 256 on it"),
    ("flash_attn_fwd_pp", "epilogue_id_shared", "      fence.proxy.async                                # generic writes -> TMA (async proxy) reads\n      barrier 3 + wg, 128",
     "      fence.proxy.async                                # generic writes -> TMA (async proxy) reads\n      barrier 3, 128", "E0751",
     "both warpgroups' epilogue barriers share id 3 with count 128: a phase can complete with warps of "
     "either warpgroup, so the TMA store may read a staging tile whose stmatrix has not finished"),
    ("flash_attn_fwd_pp", "first_turn_removed", "      barrier.arrive 1, 256                            # the first turn", "",
     "E0751", "nobody gives the first turn: warpgroup 0's first wait never opens (deadlock)"),
    ("flash_attn_fwd_pp", "gqa_head_modulo", "      let g = bh / grp\n", "      let g = bh % BHK\n", "dynamic",
     "the KV head of a query head is taken modulo BHK (interleaved) instead of bh / (BH / BHK) (grouped): "
     "with BH > BHK every query head but the first of each group reads another group's K and V"),
    ("flash_attn_fwd_pp", "lse_log2", "      mi = (mi + log2(li)) * 0.6931471805599453        # natural-log LSE",
     "      mi = mi + log2(li)                               # natural-log LSE", "dynamic",
     "the LSE is stored in the log2 domain: L is off by a factor ln 2"),
    # ---- flash_attn_varlen_fwd: offsets of packed sequences --------------------------------
    ("flash_attn_varlen_fwd", "q_offset_dropped", "tma Qs <- Q[h, st + m0, 0] on qp.full(sq)",
     "tma Qs <- Q[h, m0, 0] on qp.full(sq)", "dynamic",
     "the Q tile is read without its sequence's first row: every sequence but the first attends with sequence 0's queries"),
    ("flash_attn_varlen_fwd", "o_offset_dropped", "tma.store O[h, st + r0, 0] <- Os[wg]",
     "tma.store O[h, r0, 0] <- Os[wg]", "dynamic",
     "full blocks are stored at the row of the block within its sequence, not in the packed tensor: "
     "sequence 0's rows are overwritten and the other sequences' stay unwritten"),
    ("flash_attn_varlen_fwd", "key_mask_le", "          sacc[r, c] = select(c < sl && (CAUSAL == 0 || c <= r0 + r), sacc[r, c], -inf)",
     "          sacc[r, c] = select(c <= sl && (CAUSAL == 0 || c <= r0 + r), sacc[r, c], -inf)", "dynamic",
     "the key mask of block 0 admits key sl: the first row of the next sequence enters every short sequence's softmax"),
    ("flash_attn_varlen_fwd", "gqa_head_modulo", "        let g = h / grp\n", "        let g = h % HK\n", "dynamic",
     "the KV head is h % HK instead of h / (H / HK): with H > HK query heads read another group's K and V"),
    ("flash_attn_varlen_fwd", "tail_row_mask_le", "store O[vh, vr : +64, 0 : +D] <- bf16(o[r, c]) mask vh >= 0 && vh < H && r0 + r < sl",
     "store O[vh, vr : +64, 0 : +D] <- bf16(o[r, c]) mask vh >= 0 && vh < H && r0 + r <= sl", "dynamic",
     "the ragged last block stores one row past its sequence: the next sequence's first row is overwritten "
     "(with whichever block writes last)"),
    # ---- attn_bwd: tma.store.add ---------------------------------------------------------
    ("attn_bwd", "dq_add_no_wait", "      tma.store.wait 0                                 # the previous tile's dQ add has read dQs[wg]", "",
     "E0726", "dQs is rewritten while the previous tile's tma.store.add may still read it: wrong dQ partials are added"),
    ("attn_bwd", "dq_add_no_fence", "      fence.proxy.async                                # generic writes -> TMA (async proxy) reads\n", "", "E0725",
     "the dQ partial's generic stores reach the TMA reduction unfenced: it can add stale shared memory"),
    ("attn_bwd", "dq_store_not_add", "      tma.store.add dQacc[bh, wg * XW * 64, m0] <- dQs[wg]",
     "      tma.store dQacc[bh, wg * XW * 64, m0] <- dQs[wg]", "E0821",
     "the dQ partial is stored, not added: each key block overwrites the others' contributions"),
    ("attn_bwd", "dq_add_row_zero", "      tma.store.add dQacc[bh, wg * XW * 64, m0] <- dQs[wg]",
     "      tma.store.add dQacc[bh, 0, m0] <- dQs[wg]", "E0820",
     "with XWG = 1 both warpgroups add their half of dQ^T into rows 0 .. 63: rows 64 .. 127 get nothing, 0 .. 63 twice"),
    # ---- attn_decode_partial -----------------------------------------------------------
    ("attn_decode_partial", "pv_wrong_stage", "        wgmma o += p * Vs[prev]                        # O += P_{j-1} V_{j-1}",
     "        wgmma o += p * Vs[s]                           # O += P_{j-1} V_{j-1}", "dynamic",
     "P_{j-1} is multiplied with V_j, not V_{j-1}: every split of two tiles or more sums the wrong values"),
    ("attn_decode_partial", "o_not_rescaled", "        o = o * alpha\n        p = bf16(sacc)", "        p = bf16(sacc)", "dynamic",
     "O is not rescaled when the row max grows: earlier tiles keep a too large weight"),
    ("attn_decode_partial", "hi_past_s", "  let hi = min(S, lo + L)", "  let hi = lo + L", "dynamic",
     "the last split runs to lo + L past S: the zero-filled keys past S enter the softmax with score 0"),
    # ---- library/kernels/gemm_splitk_fused: atomics ------------------------------------------
    ("library/kernels/gemm_splitk_fused", "counter_unmasked", "let old = atomic.add(L[bm + r0, bn + c0], 1) mask mine",
     "let old = atomic.add(L[bm + r0, bn + c0], 1)", "E0801",
     "the counter RMW has no mask: threads of the ragged edge tile bump counters past the end of L"),
    ("library/kernels/gemm_splitk_fused", "add_unmasked_n", "atomic.add W[rb : +64, bn : +BN] <- acc[r, c] mask rb + r < M && bn + c < N",
     "atomic.add W[rb : +64, bn : +BN] <- acc[r, c] mask rb + r < M", "E0801",
     "the workspace adds are not masked in N: the ragged last column tile adds past W's rows"),
    ("library/kernels/gemm_splitk_fused", "last_never", "let last = mine && old == SPLIT - 1", "let last = mine && old == SPLIT",
     "dynamic", "the last arriver reads SPLIT - 1, never SPLIT: nobody stores C, and W and L are left dirty"),
    ("library/kernels/gemm_splitk_fused", "w_not_cleared", "acc[r, c] = atomic.exch(W[rb + r, bn + c], 0.0) mask",
     "acc[r, c] = load W[rb + r, bn + c] mask", "dynamic",
     "the sums are read, not exchanged with 0: the workspace W is left dirty for the next launch"),
    ("library/kernels/gemm_splitk_fused", "counter_not_reset", "    store L[bm + r0, bn + c0] <- 0 mask last\n", "",
     "dynamic", "the counters are not reset: the next launch's last arriver never reads SPLIT - 1"),
    # ---- shared staging and barrier ids between warpgroups (the outside corpus's finds, here in other kernels)
    ("gemm_sm90_persistent", "staging_slot_shared", "        stmatrix Cs[wg, j % 2] <- bf16(acc[:, j * 64 : +64])",
     "        stmatrix Cs[0, j % 2] <- bf16(acc[:, j * 64 : +64])", "E0766",
     "both consumer warpgroups stage into Cs[0]: a write-write race, and Cs[1] is TMA-stored unwritten"),
    ("gemm_bias_act", "store_barrier_id_shared", "      barrier 1 + wg, 128                             # every writer has fenced",
     "      barrier 1, 128                             # every writer has fenced", "E0751",
     "both warpgroups' pre-store barrier is id 1 with count 128: a phase can complete with warps of both, "
     "and the TMA store may copy rows its own warpgroup has not fenced"),
    ("attn_bwd", "dk_staging_rows_shared", "    stmatrix Ks[wg * 64 : +64, :] <- bf16(dk)",
     "    stmatrix Ks[0 : +64, :] <- bf16(dk)", "E0766",
     "both warpgroups stage dK into rows 0 .. 63 of Ks: a race, and the second warpgroup's dK rows are stored from stale K"),
]


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def make(entry):
    ex, name, find, repl, expected, what = entry
    rel = ex + ".tir" if "/" in ex else "examples/" + ex + ".tir"   # library/kernels/X: a library kernel
    src = open(os.path.join(ROOT, rel)).read()
    at = src.find(find)
    if at < 0:
        sys.exit("bugs.py: %s/%s: the text to change is not in %s" % (ex, name, rel))
    if repl == "":  # delete the whole lines the text touches
        start = src.rfind("\n", 0, at) + 1
        end = src.find("\n", at + len(find) - (1 if find.endswith("\n") else 0))
        body = src[:start] + src[end + 1:]
    else:
        body = src[:at] + repl + src[at + len(find):]
    # the changed line: the first that differs
    a, b = src.split("\n"), body.split("\n")
    bug = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), len(b) - 1)
    if expected == "dynamic":
        head = ["# corpus: dynamic"]
    else:
        head = ["# corpus: static %s at %d%s" % (expected, bug + 1 + 3, " deleted" if repl == "" else "")]
    head.append("# bug: " + what)
    head.append("# planted in %s, line %d (tests/corpus/bugs.py)" % (rel, bug + 1))
    d = os.path.join(HERE, os.path.basename(ex))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".tir"), "w") as f:
        f.write("\n".join(head) + "\n" + body)


if __name__ == "__main__":
    for e in B:
        make(e)
    print("%d planted bugs (%d static, %d dynamic)" % (len(B), sum(e[4] != "dynamic" for e in B),
                                                       sum(e[4] == "dynamic" for e in B)))
