#!/usr/bin/env python3
"""plant.py — writes the outside planted-bug corpus (tests/outside/corpus/*.tir) and its
manifest (tests/outside/corpus/MANIFEST.tsv) from the list of one-line bugs below.

Each bug is one line of a copy of an example or library kernel changed by hand: the line
number is the original's, `old` must occur on it exactly once and is replaced by `new`
(an empty `new` with old == the whole statement deletes the statement, leaving the line
blank so the numbering stays). Each file gets a three-line header:

    # corpus: static | dynamic        (static: I think `cakec check` should catch it)
    # bug: LINE: what is wrong        (LINE in the planted file, i.e. original + 3)
    # from: SOURCE

usage: python3 tests/outside/plant.py [--out DIR]   (from the repo root; rewrites the corpus,
                                                     or writes it to DIR)
"""
import os, sys

HEADER = 3
FA = "examples/flash_attn_fwd.tir"
PP = "examples/flash_attn_fwd_pp.tir"
GP = "examples/gemm_sm90_persistent.tir"
G9 = "examples/gemm_sm90.tir"
G8 = "examples/gemm_sm80.tir"
VL = "examples/flash_attn_varlen_fwd.tir"
DP = "examples/attn_decode_partial.tir"
SK = "library/kernels/gemm_splitk_fused.tir"

# name, kind, source, line, old, new, what is wrong
BUGS = [
 # --- the FA3 ping-pong (named barriers 1 and 2 between the consumer warpgroups)
 ("pp_drop_turn_wait_peeled", "static", PP, 132, "barrier 1 + wg, 256", "",
  "the ping-pong wait before the peeled block's S_0 GEMM is missing: both warpgroups issue GEMMs at once and the turn phases drift"),
 ("pp_drop_turn_wait_loop", "static", PP, 150, "barrier 1 + wg, 256", "",
  "the ping-pong wait before S_j / P V in the KV loop is missing (named-barrier wait dropped)"),
 ("pp_drop_handover", "static", PP, 154, "barrier.arrive 2 - wg, 256", "",
  "the hand-over arrive after the loop's GEMMs is missing: the other warpgroup waits forever"),
 ("pp_handover_count_128", "static", PP, 154, "barrier.arrive 2 - wg, 256", "barrier.arrive 2 - wg, 128",
  "the hand-over arrive uses count 128 while the waits use 256 (wrong barrier count)"),
 ("pp_turn_count_128", "static", PP, 150, "barrier 1 + wg, 256", "barrier 1 + wg, 128",
  "the turn wait uses count 128 while the arrive side uses 256 (wrong barrier count)"),
 ("pp_no_first_turn", "static", PP, 117, "barrier.arrive 1, 256", "",
  "warpgroup 1 never gives warpgroup 0 the first turn: both wait on their barriers forever"),
 ("pp_staging_barrier_shared", "static", PP, 182, "barrier 3 + wg, 128", "barrier 3, 128",
  "both warpgroups use named barrier 3 with count 128 before stmatrix: a phase can complete with warps of both warpgroups, so a warpgroup's own warps are not ordered after tma.store.wait"),
 ("pp_gqa_div_bhk", "dynamic", PP, 95, "let g = bh / grp", "let g = bh / BHK",
  "GQA: the KV head is the query head divided by the KV head count instead of the group size (wrong head mapping)"),
 ("pp_causal_strict", "dynamic", PP, 158, "n0 + c <= r0 + r", "n0 + c < r0 + r",
  "causal mask off by one: the diagonal key (j == i) is masked in the loop blocks"),
 ("pp_causal_nb_producer", "static", PP, 94, "cdiv(min(S, m0 + BM), BN)", "min(S, m0 + BM) / BN",
  "causal KV block count truncated in the producer only: on a ragged S it loads one block fewer than the consumers wait for"),
 ("pp_tile_step_literal", "static", PP, 119, "step grid.x", "step 132",
  "the consumers' persistent tile loop strides by 132 instead of the grid size"),
 ("pp_o_not_cleared", "static", PP, 127, "o = 0", "",
  "the output accumulator is not cleared per persistent tile: tile 2 starts from tile 1's O"),
 ("pp_sacc_not_cleared", "dynamic", PP, 149, "sacc = 0", "",
  "S_j is not cleared before S_j = Q K_j^T: the wgmma accumulates onto P_{j-1}'s values"),
 ("pp_no_rescale", "dynamic", PP, 152, "o = o * alpha", "",
  "O is not rescaled to the new row max before O += P V"),
 ("pp_wait2_release_early", "static", PP, 155, "wgmma.wait 1", "wgmma.wait 2",
  "wgmma.wait 2 does not retire S_j: its accumulator is read by the mask/rowmax and K_j released while the GEMM may still run"),
 ("pp_lse_store_oob", "static", PP, 180, "lr + r < S", "lr + r <= S",
  "the LSE row store's mask admits row S: out-of-bounds tail store"),
 ("pp_drop_store_wait", "static", PP, 181, "tma.store.wait 0", "",
  "the previous tile's TMA store may still read Os[wg] when stmatrix overwrites it (missing tma.store.wait)"),
 ("pp_staging_overlap", "static", PP, 183, "stmatrix Os[wg]", "stmatrix Os[0]",
  "both warpgroups stage O in Os[0] (shared-memory overlap, a race between warpgroups); Os[1] is stored unwritten"),
 ("pp_v_not_transposed", "dynamic", PP, 151, "Ks[ks]^T", "Ks[ks]",
  "the K operand of S_j = Q K_j^T is not transposed (K-major vs MN-major mix-up on a wgmma operand): shapes agree at D = BN = 128, values are Q K"),
 ("pp_p_layout_wgmma", "static", PP, 110, "reg p: bf16[64, BN] layout wgmma_a", "reg p: bf16[64, BN] layout wgmma",
  "P, the register A operand of O += P V, is declared with the accumulator layout `wgmma` instead of `wgmma_a` (layout mistake on a wgmma operand)"),
 # --- flash_attn_fwd (plain mbarrier for Q, explicit expect_tx and parity)
 ("fa_qbar_parity_1", "static", FA, 74, "mbarrier.wait qbar, 0", "mbarrier.wait qbar, 1",
  "the Q mbarrier is waited on parity 1: a fresh mbarrier passes it at once, before the TMA landed (parity mistake)"),
 ("fa_drop_q_wait", "static", FA, 74, "mbarrier.wait qbar, 0", "",
  "missing TMA wait: Q is read by the first wgmma without waiting on its mbarrier"),
 ("fa_tx_half", "static", FA, 55, "BM * 128 * 2", "BM * 64 * 2",
  "wrong mbarrier tx count: the Q box is BM x 128 bf16 (two panels) but only half the bytes are expected"),
 ("fa_causal_plus_one", "dynamic", FA, 81, "c <= r0 + r", "c <= r0 + r + 1",
  "causal mask off by one in the first block: key i + 1 is visible to query i"),
 ("fa_ragged_unmasked", "dynamic", FA, 96, "if n0 + BN > S ||", "if n0 > S ||",
  "the ragged last KV block is not masked (its zero-filled keys score 0 and enter the softmax): out-of-bounds tail"),
 ("fa_release_v_early", "static", FA, 104, "wgmma.wait 0", "wgmma.wait 1",
  "stage prev (V_{j-1}) is released while the P V wgmma reading it may be in flight"),
 ("fa_drop_store_barrier", "static", FA, 117, "barrier 1 + wg, 128", "",
  "the TMA store of O is issued before the other threads of the warpgroup wrote and fenced their part (race inside the warpgroup)"),
 ("fa_drop_proxy_fence", "static", FA, 116, "fence.proxy.async", "",
  "no fence.proxy.async between stmatrix (generic proxy) and tma.store (async proxy)"),
 ("fa_pv_wrong_stage", "dynamic", FA, 93, "Vs[prev]", "Vs[s]",
  "O += P_{j-1} V uses V_j (the current stage) instead of V_{j-1}"),
 # --- persistent GEMM
 ("gp_acc_not_cleared", "static", GP, 60, "acc = 0", "",
  "the accumulator is not cleared between persistent tiles"),
 ("gp_tile_step_literal", "static", GP, 55, "step grid.x", "step 132",
  "the consumers' persistent tile stride is 132, not the grid size"),
 ("gp_store_wait_2", "static", GP, 76, "tma.store.wait 1", "tma.store.wait 2",
  "tma.store.wait 2 lets the store that read Cs[wg, j % 2] two stores ago still run while stmatrix overwrites it (double-buffer overlap)"),
 ("gp_group_map_consumer", "dynamic", GP, 58, "(first + t % width % gm) * BM", "(first + t % gm) * BM",
  "the consumers' grouped-raster row map differs from the producer's in a partial last group: a tile's product is stored at another tile's place (each tile still stored once)"),
 ("gp_k_tail_dropped", "dynamic", GP, 37, "cdiv(K, BK)", "K / BK",
  "the k-tile count truncates: a ragged K tail is never multiplied"),
 ("gp_store_col_32", "static", GP, 81, "bn + j * 64", "bn + j * 32",
  "the 64-column chunks of C are stored 32 columns apart: overlapping and missing columns"),
 # --- gemm_sm90
 ("g90_barrier_count_256", "static", G9, 78, "barrier 1 + wg, 128", "barrier 1 + wg, 256",
  "named barrier count 256 for a 128-thread warpgroup: it never opens"),
 ("g90_barrier_id_shared", "static", G9, 81, "barrier 1 + wg, 128", "barrier 1, 128",
  "both warpgroups use barrier 1 (count 128) before the TMA store: a phase may mix warps of both, so the issuing thread's warpgroup is not known to have fenced"),
 ("g90_staging_shared", "static", G9, 79, "stmatrix Cs[wg, j % 2]", "stmatrix Cs[0, j % 2]",
  "both consumer warpgroups stage into Cs[0, .]: a race between warpgroups, and Cs[1, .] is stored unwritten"),
 ("g90_drop_final_store_wait", "static", G9, 84, "tma.store.wait 0", "",
  "the kernel may exit while its last TMA stores still read shared memory"),
 ("g90_release_unretired", "static", G9, 69, "wgmma.wait 1", "",
  "the previous stage is released while its wgmma group may still read it"),
 ("g90_assume_k4", "static", G9, 29, "assume K % 8 == 0", "assume K % 4 == 0",
  "wrong assume: K % 4 gives an 8-byte row pitch, TMA needs 16 bytes"),
 # --- gemm_sm80
 ("s80_cp_wait_off", "static", G8, 71, "cp.async.wait STAGES - 2", "cp.async.wait STAGES - 1",
  "cp.async.wait STAGES-1 leaves the group of the slot about to be read pending"),
 ("s80_drop_sync", "static", G8, 72, "sync", "",
  "no barrier between the cp.async waits and the ldmatrix reads of other threads' copies (and the refill of the freed slot)"),
 ("s80_refill_live_slot", "static", G8, 74, "let ns = nk % STAGES", "let ns = kt % STAGES",
  "the refill goes into the slot being read this iteration (stage overlap)"),
 ("s80_a_mask_oob", "static", G8, 61, "bm + r < M", "bm + r <= M",
  "the prologue's A copy mask admits row M: out-of-bounds read at the ragged edge"),
 ("s80_warp_map", "static", G8, 43, "(warp / (BN / WN)) * WM", "(warp % (BN / WN)) * WM",
  "the warp's row offset uses % like its column offset: two warps compute the same tile, half of C is never written"),
 # --- varlen and decode
 ("vl_l_row_no_offset", "dynamic", VL, 203, "var vr: i32 = st + r0", "var vr: i32 = r0",
  "varlen: the LSE rows (and ragged O rows) are addressed without the sequence's offset"),
 ("vl_o_tma_no_offset", "dynamic", VL, 211, "O[h, st + r0, 0]", "O[h, r0, 0]",
  "varlen: the TMA store of a full O tile forgets the sequence's first row"),
 ("vl_key_mask_T", "dynamic", VL, 182, "n0 + c < sl", "n0 + c < T",
  "varlen: keys past the sequence end (the next sequence's) are not masked"),
 ("dp_empty_split_nan", "dynamic", DP, 135, "select(li[r] > 0.0, o[r, c] / li[r], 0.0)", "o[r, c] / li[r]",
  "split-KV decode: an empty split (lo >= S) divides 0 by a zero row sum: NaN partial outputs instead of 0"),
 ("dp_row_mask_oob", "static", DP, 135, "mask r < R", "mask r <= R",
  "the partial O store admits row R: out-of-bounds tail"),
 # --- split-K with atomics (library)
 ("sk_last_never", "dynamic", SK, 87, "old == SPLIT - 1", "old == SPLIT",
  "the last arriver is never elected: C is never stored and the workspace is left non-zero"),
 ("sk_counter_not_reset", "dynamic", SK, 91, "store L[bm + r0, bn + c0] <- 0 mask last", "",
  "the arrival counter is not reset: the workspace is left non-zero (the next call elects wrongly)"),
 ("sk_split_range", "dynamic", SK, 56, "(s + 1) * KT / SPLIT", "(s + 1) * (KT / SPLIT)",
  "the split's end is computed with KT / SPLIT first: k-tiles are dropped or done twice when KT % SPLIT != 0"),
 ("sk_drop_release_fence", "dynamic", SK, 82, "fence.gpu", "",
  "the release fence between the atomic adds and the counter is missing (memory-model bug; may not show on a GPU)"),
 # --- SIMT
 ("ln_zero_lanes_in_var", "dynamic", "examples/layernorm.tir", 44, "select(i < N, dot(d, d), 0.0)", "dot(d, d)",
  "the zero-filled lanes past the row end enter the variance as (0 - mu)^2"),
 ("sm_tail_zero_not_ninf", "dynamic", "examples/softmax.tir", 38, "select(i < N, load x[block.x, i : +4] mask i < N, -inf)", "load x[block.x, i : +4] mask i < N",
  "lanes past the row end are 0, not -inf: they add exp(0 - max) to the sum"),
 ("sm_warp_row_oob", "static", "examples/softmax.tir", 74, "if row < M", "if row <= M",
  "softmax_warp: the row guard admits row M: out-of-bounds tail"),
 ("rms_assume_too_long", "static", "examples/rmsnorm.tir", 23, "assume N <= THREADS * VEC * ITERS", "assume N <= 2 * THREADS * VEC * ITERS",
  "wrong assume: rows up to twice what the registers hold are admitted, the second half is never written"),
 ("ce_sum_stride", "dynamic", "examples/cross_entropy.tir", 37, "step THREADS", "step 2 * THREADS",
  "the exp-sum loop strides by twice the block: half the logits are left out of the log-sum-exp"),
 ("va_tail_skip_first", "static", "examples/vector_add.tir", 38, "for e in i .. N", "for e in i + 1 .. N",
  "the scalar tail starts one element late: element i of the straddling vector is never written"),
]

# small shapes for `cakec run --sim` (local validation of the dynamic entries: each must fail)
SIM_BY_SOURCE = {
    FA: "--shape BH=2,S=300", PP: "--shape BH=2,BHK=1,S=300",
    GP: "--shape M=300,N=264,K=328", G9: "--shape M=200,N=264,K=520",
    G8: "--shape M=150,N=136,K=200", VL: "--shape H=2,HK=1,T=600,B1=9",
    DP: "--shape BHK=2,R=5,S=300,NS=4 --tol-scale 256", SK: "--shape M=20,N=136,K=520",
    "examples/layernorm.tir": "--shape M=2,N=8", "examples/softmax.tir": "--shape M=3,N=1000",
    "examples/rmsnorm.tir": "--shape M=3,N=1000", "examples/cross_entropy.tir": "--shape B=3,V=1000",
    "examples/vector_add.tir": "--shape N=5001",
}
SIM_BY_BUG = {
    "pp_causal_strict": "--shape BH=2,BHK=1,S=300 --set CAUSAL=1",
    "pp_causal_nb_producer": "--shape BH=2,BHK=1,S=300 --set CAUSAL=1",
    "fa_causal_plus_one": "--shape BH=2,S=300 --set CAUSAL=1",
    "gp_group_map_consumer": "--shape M=2432,N=264,K=64",
    "sm_warp_row_oob": "--kernel softmax_warp --shape M=20,N=1000",
}


def main():
    root = os.getcwd()
    out = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--out" else os.path.join(root, "tests/outside/corpus")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".tir"):
            os.remove(os.path.join(out, f))
    rows = ["name\tkind\tline\tfrom\torig_line\told\tnew\twhat\tsim"]
    names = set()
    for name, kind, src, line, old, new, what in BUGS:
        assert name not in names, name
        names.add(name)
        assert kind in ("static", "dynamic"), name
        lines = open(os.path.join(root, src)).read().split("\n")
        text = lines[line - 1]
        if text.count(old) != 1:
            sys.exit("%s: `%s` occurs %d times on %s:%d: %r" % (name, old, text.count(old), src, line, text))
        if new == "":
            lines[line - 1] = ""
        else:
            lines[line - 1] = text.replace(old, new)
        head = ["# corpus: %s" % kind, "# bug: %d: %s" % (line + HEADER, what), "# from: %s" % src]
        open(os.path.join(out, name + ".tir"), "w").write("\n".join(head + lines))
        rows.append("\t".join([name, kind, str(line + HEADER), src, str(line), old, new, what,
                                SIM_BY_BUG.get(name, SIM_BY_SOURCE[src])]))
    open(os.path.join(out, "MANIFEST.tsv"), "w").write("\n".join(rows) + "\n")
    print("%d bugs (%d static, %d dynamic) in tests/outside/corpus" % (
        len(BUGS), sum(b[1] == "static" for b in BUGS), sum(b[1] == "dynamic" for b in BUGS)))


if __name__ == "__main__":
    main()
