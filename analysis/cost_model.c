/* cost_model.c — the prediction (cost.h, cost_predict): a profile's counts on
 * a device row of the target table, with calibration constants. The formulas
 * are docs/cost-model.md's; every number a prediction leans on that the
 * profile could not know is said in the result's notes. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cost.h"

const char *const cost_resource_names[CR__N] = {
    "tensor", "simt", "mufu", "shared", "l2", "dram", "requests", "latency", "launch"};

void cost_calib_default(CostCalib *c)
{
    /* fitted by hand to the H200 measurements of bench/RESULTS.md (2026-11-30):
       gemm_sm90 8192^3 at 0.79 of the wgmma peak, gemm_sm80 at 0.79 of the
       mma.sync estimate, copy at 0.87 of HBM, flash attention's softmax not
       overlapped with its own wgmma */
    memset(c, 0, sizeof *c);
    c->eff_wgmma = 0.84;
    c->eff_mma = 0.80;
    c->eff_mfma = 0.70;
    c->eff_hbm = 0.88;
    c->eff_l2 = 0.90;
    c->eff_alu = 0.80;
    c->eff_sfu = 0.90;
    c->eff_smem = 0.85;
    c->overlap = 0.25;
    c->l2_miss = 0.5;
    c->rel_err = 0.15;
    c->pipe_lat = 1;
    c->loop_mlp = 1;
    c->lat_block = 0;
    c->req_rate = 0;
    c->lat_mem = 1;
    c->res_exposed = 0;
    c->mlp_knee = 0;
    c->pipe_knee = 0;
    c->body_knee = 0;
    snprintf(c->source, sizeof c->source, "built-in defaults (analysis/cost_model.c)");
}

typedef struct {
    double tc, alu, sfu, smem;   /* clocks of one block on one SM, per resource */
} BlockClk;

static double tc_rate(const TgDevice *d, int unit)
{
    return unit == COST_TC_WGMMA ? d->wgmma_flops : unit == COST_TC_MMA ? d->mma_sync_flops : d->mfma_flops;
}

static double tc_eff(const CostCalib *c, int unit)
{
    return unit == COST_TC_WGMMA ? c->eff_wgmma : unit == COST_TC_MMA ? c->eff_mma : c->eff_mfma;
}

static BlockClk block_clk(const CostWork *w, const TgDevice *d, const CostCalib *c)
{
    BlockClk b = {0};
    for (int u = 0; u < COST_TC__N; u++) {
        double r = tc_rate(d, u);
        if (w->tc_work[u] > 0)
            b.tc += w->tc_work[u] / ((r > 0 ? r : d->fma_lanes * 2) * tc_eff(c, u));
    }
    b.alu = (w->alu + w->shfl) / (d->fma_lanes * c->eff_alu);
    b.sfu = w->sfu / (d->mufu_lanes * c->eff_sfu);
    b.smem = (w->srd + w->swr) / (d->smem_bytes_clk * c->eff_smem);
    return b;
}

/* one role's (or block's) critical path: the tensor work and the SIMT work
   overlap by `overlap`; the MUFU and FMA pipes issue from the same warps */
static double path_clk(BlockClk b, double overlap)
{
    double simt = b.alu > b.sfu ? b.alu + 0.5 * b.sfu : b.sfu + 0.5 * b.alu;
    double hi = b.tc > simt ? b.tc : simt, lo = b.tc > simt ? simt : b.tc;
    return hi + (1 - overlap) * lo;
}

static double block_path(const CostProfile *p, const CostWork *w, const TgDevice *d,
                         const CostCalib *c, double overlap, double *smem_clk)
{
    BlockClk all = block_clk(w, d, c);
    *smem_clk = all.smem;
    if (!p->nroles)
        return path_clk(all, overlap);
    /* roles run concurrently: the longest one, but roles that use the same
       unit share it (two consumer roles' wgmma take turns on the SM's tensor
       cores: ping-pong overlaps one role's epilogue with the other's mainloop,
       it does not double the tensor rate) */
    double worst = 0, tc = 0, simt = 0;
    CostWork rest = *w;
    for (uint32_t r = 0; r < p->nroles; r++) {
        BlockClk rb = block_clk(&p->roles[r].w, d, c);
        double t = path_clk(rb, overlap);
        if (t > worst) worst = t;
        tc += rb.tc;
        simt += rb.alu > rb.sfu ? rb.alu : rb.sfu;
        if (tc > worst) worst = tc;
        if (simt > worst) worst = simt;
        double *x = (double *)&rest;
        const double *y = (const double *)&p->roles[r].w;
        for (size_t i = 0; i < sizeof rest / sizeof(double); i++)
            x[i] -= y[i];
    }
    return worst + path_clk(block_clk(&rest, d, c), overlap);
}

static void occupancy(const CostProfile *p, const TgDevice *d, CostResult *r)
{
    const TargetInfo *ti = tg_info(p->tg);
    int64_t warp = ti->warp_size;
    int64_t warps = (p->threads + warp - 1) / warp;
    int64_t by_threads = d->max_threads_per_sm / (warps * warp);
    int64_t smem = p->smem_bytes + (ti->vendor == VENDOR_NVIDIA ? 1024 : 0);
    int64_t by_smem = p->smem_bytes > 0 ? d->smem_per_sm / smem : 1 << 20;
    int regs = p->regs_est > ti->max_regs_per_thread ? ti->max_regs_per_thread : p->regs_est;
    int64_t by_regs = ti->regs_per_sm / ((int64_t)((regs + 7) / 8 * 8) * warps * warp);
    int64_t bps = d->max_blocks_per_sm;
    r->occ_limiter = "blocks";
    if (by_threads < bps) { bps = by_threads; r->occ_limiter = "threads"; }
    if (by_smem < bps) { bps = by_smem; r->occ_limiter = "shared memory"; }
    if (by_regs < bps) { bps = by_regs; r->occ_limiter = "registers"; }
    r->blocks_per_sm = (int)bps;
    int64_t resident = bps * d->sm_count;
    if (p->nblocks < resident) {
        r->occ_limiter = "grid";
        resident = p->nblocks;
    }
    double max_warps = (double)d->max_threads_per_sm / (double)warp;
    double per_sm = (double)resident / d->sm_count;
    r->occupancy = per_sm * (double)warps / max_warps;
    r->waves = bps > 0 ? (double)p->nblocks / (double)(bps * d->sm_count) : 0;
    double wc = ceil(r->waves);
    r->wave_efficiency = wc > 0 ? r->waves / wc : 0;
}

static double peak_flops(const CostProfile *p, const TgDevice *d, int *tc_used)
{
    double flops = 0, work = 0, rate = 0;
    *tc_used = 0;
    for (int u = 0; u < COST_TC__N; u++)
        if (p->w.tc_flops[u] > 0) {
            flops += p->w.tc_flops[u];
            work += p->w.tc_work[u];
            if (tc_rate(d, u) > rate) rate = tc_rate(d, u);
            *tc_used = 1;
        }
    if (*tc_used && rate > 0)
        return rate * (flops / work) * d->sm_count * d->clock_ghz * 1e9;
    return d->fma_lanes * 2 * d->sm_count * d->clock_ghz * 1e9;
}

static void uncertainty(const CostProfile *p, const TgDevice *d, CostResult *r, double *widen)
{
    const TargetInfo *ti = tg_info(p->tg);
    if (p->unknown_trips) {
        *widen += 0.5;
        r->measure = 1;
    }
    if (!p->regs_from_roles && p->regs_est > ti->max_regs_per_thread) {
        cost_note(r->notes, &r->nnotes, "estimated %d registers per thread exceed %d: spills are "
                  "likely and not modelled", p->regs_est, ti->max_regs_per_thread);
        *widen += 1.0;
        r->measure = 1;
    } else if (!p->regs_from_roles && p->regs_est > 192) {
        *widen += 0.15;
    }
    if (r->blocks_per_sm < 1) {
        cost_note(r->notes, &r->nnotes, "measure: the block does not fit on one SM (threads, shared memory or "
                  "registers): the launch fails or the model does not apply");
        snprintf(r->infeasible, sizeof r->infeasible, "cannot launch: no block fits on an SM (limit: %s)",
                 r->occ_limiter ? r->occ_limiter : "unknown");
        *widen += 1.0;
        r->measure = 1;
    }
    if (p->spill_bytes > 0) {
        cost_note(r->notes, &r->nnotes, "measure: ptxas reports %d bytes of local memory per thread "
                  "(spills or local arrays; not modelled)", p->spill_bytes);
        if (!r->infeasible[0])
            snprintf(r->infeasible, sizeof r->infeasible, "spills: %d bytes of local memory per thread",
                     p->spill_bytes);
        *widen += 0.5;
        r->measure = 1;
    }
    if (ti->vendor == VENDOR_AMD) {
        cost_note(r->notes, &r->nnotes, "AMD devices are not calibrated (datasheet numbers only)");
        *widen += 0.5;
        r->measure = 1;
    }
    if (p->uses_tc[COST_TC_MMA] && d->wgmma_flops > 0) {
        cost_note(r->notes, &r->nnotes, "mma.sync on a wgmma device: its rate is an estimate "
                  "(about 62%% of the wgmma peak)");
        *widen += 0.15;
    }
    for (int u = 0; u < COST_TC__N; u++)
        if (p->uses_tc[u] && tc_rate(d, u) <= 0) {
            cost_note(r->notes, &r->nnotes, "the device has no %s unit: counted at the FMA rate",
                      u == COST_TC_WGMMA ? "wgmma" : u == COST_TC_MMA ? "mma.sync" : "MFMA");
            *widen += 1.0;
            r->measure = 1;
        }
    if (r->waves > 0 && r->waves < 0.5) {
        cost_note(r->notes, &r->nnotes, "fewer blocks (%lld) than half the SMs' slots: launch "
                  "and latency dominate", (long long)p->nblocks);
        *widen += 0.25;
    }
}

void cost_pattern(const CostProfile *p, const CostResult *r, char *key, size_t n)
{
    const char *unit = p->uses_tc[COST_TC_WGMMA] ? "wgmma" : p->uses_tc[COST_TC_MMA] ? "mma"
                     : p->uses_tc[COST_TC_MFMA] ? "mfma" : "simt";
    /* the schedule's traits the fit cannot carry from one kernel to another:
       consumer roles taking turns on the tensor unit, tiles stored element by
       element from registers, narrow (scalar) global accesses */
    snprintf(key, n, "%s/%s%s%s%s%s", unit, cost_resource_names[r->bottleneck], p->nroles ? "/roles" : "",
             p->tc_roles > 1 ? "/pp" : "", p->tile_stores && p->uses_tc[COST_TC_WGMMA] + p->uses_tc[COST_TC_MMA] +
             p->uses_tc[COST_TC_MFMA] ? "/regst" : "", p->narrow && !p->nroles ? "/narrow" : "");
    if (p->scatter && strlen(key) + 8 < n)
        strcat(key, "/scatter");
}

/* the inputs of the prediction below the ranges family f was fitted on (a file
   without them: none): fewer bytes in flight than its training cases had where
   Little's law binds (the loop's memory parallelism is a fitted guess there),
   or a grid that fills less of one wave than they did (each SM's few blocks
   run their loops alone); 1 with the reason noted */
static int outside_inputs(const CostPattern *f, CostResult *r)
{
    double ratio = r->inflight_needed > 0 ? r->inflight_bytes / r->inflight_needed : 0;
    if (f->mlp_lo > 0 && ratio > 0 && ratio < 2 && ratio < f->mlp_lo / 1.25) {
        cost_note(r->notes, &r->nnotes, "measure: %.2f of the bytes in flight Little's law needs, below "
                  "the %.2f family %s was fitted from", ratio, f->mlp_lo, r->pattern);
        return 1;
    }
    if (f->waves_lo > 0 && r->waves > 0 && r->waves < 1 && r->waves < f->waves_lo / 2) {
        cost_note(r->notes, &r->nnotes, "measure: the grid fills %.2f of one wave, below the %.2f family "
                  "%s was fitted from", r->waves, f->waves_lo, r->pattern);
        return 1;
    }
    return 0;
}

/* `model` only inside a family the calibration fitted (when it lists them) and
   within the range of times it was fitted on */
static void family(const CostProfile *p, const CostCalib *c, CostResult *r, double *widen)
{
    cost_pattern(p, r, r->pattern, sizeof r->pattern);
    if (c->npat <= 0)
        return;
    const CostPattern *f = NULL;
    for (int i = 0; i < c->npat; i++)
        if (!strcmp(c->pat[i].key, r->pattern))
            f = &c->pat[i];
    if (!f) {
        cost_note(r->notes, &r->nnotes, "measure: no calibrated family for pattern %s (the fit saw "
                  "no training kernel bound like this one)", r->pattern);
        *widen += 0.5;
        r->measure = 1;
    } else if (f->n < 2) {
        cost_note(r->notes, &r->nnotes, "measure: family %s had one training case only", r->pattern);
        *widen += 0.25;
        r->measure = 1;
    } else if (f->kernels == 1) {
        cost_note(r->notes, &r->nnotes, "measure: family %s was fitted on one kernel only (%d cases): "
                  "its error says nothing of another kernel's", r->pattern, f->n);
        *widen += 0.25;
        r->measure = 1;
    } else if (c->pat_err > 0 && f->err > c->pat_err) {
        cost_note(r->notes, &r->nnotes, "measure: family %s was fitted with an error up to %.0f%% "
                  "(80th percentile of %d training cases)", r->pattern, 100 * f->err, f->n);
        *widen += f->err;
        r->measure = 1;
    } else if (r->time_ms < f->t_lo / 4 || r->time_ms > f->t_hi * 4) {
        cost_note(r->notes, &r->nnotes, "measure: %.4g ms is outside the range family %s was fitted "
                  "on (%.4g .. %.4g ms, 4x margin)", r->time_ms, r->pattern, f->t_lo, f->t_hi);
        *widen += 0.25;
        r->measure = 1;
    } else if (outside_inputs(f, r)) {
        *widen += 0.25;
        r->measure = 1;
    }
}

/* max(a, b) for k = 0; else the k-norm (a^k + b^k)^(1/k): the larger term, plus
   what of the smaller one it does not hide (both sides are latency and work
   that overlap imperfectly) */
static double soft_max(double a, double b, double k)
{
    if (k <= 0 || a <= 0 || b <= 0)
        return fmax(a, b);
    double m = fmax(a, b);
    return m * pow(pow(a / m, k) + pow(b / m, k), 1 / k);
}

void cost_predict(const CostProfile *p, const TgDevice *d, const CostCalib *c, CostResult *r)
{
    char kernel[64], shape[256], target[16];
    memcpy(kernel, r->kernel, sizeof kernel);
    memcpy(shape, r->shape, sizeof shape);
    memcpy(target, r->target, sizeof target);
    memset(r, 0, sizeof *r);
    memcpy(r->kernel, kernel, sizeof kernel);
    memcpy(r->shape, shape, sizeof shape);
    memcpy(r->target, target, sizeof target);
    snprintf(r->device, sizeof r->device, "%s", d->name);
    snprintf(r->device_full, sizeof r->device_full, "%s", d->full_name);
    for (uint32_t i = 0; i < p->nnotes; i++)
        cost_note(r->notes, &r->nnotes, "%s", p->notes[i]);
    double clk = d->clock_ghz * 1e9;
    double nb = (double)p->nblocks;
    r->threads = p->threads;
    r->nblocks = p->nblocks;
    r->smem_bytes = p->smem_bytes;
    r->regs = p->regs_est;
    r->regs_estimated = !p->regs_from_roles;
    occupancy(p, d, r);
    int bps = r->blocks_per_sm > 0 ? r->blocks_per_sm : 1;

    /* compute: the busiest SM runs ceil(blocks / SMs) blocks, or the busiest block */
    double overlap = 1 - (1 - c->overlap) / (bps > 1 ? 2.0 : 1.0);
    double smem_clk, smem_clk_max;
    double path = block_path(p, &p->w, d, c, overlap, &smem_clk);
    double path_max = block_path(p, &p->wmax, d, c, overlap, &smem_clk_max);
    double per_sm = ceil(nb / d->sm_count);
    if (per_sm < 1) per_sm = 1;
    /* Little's law per pipeline: a block's async stages arrive no faster than
       (stages - 1) in flight per load latency (L2 hits, the DRAM share slower) */
    double async_bytes = p->w.tma_ld + p->w.cpasync;
    double reads_all = nb * (p->w.gld + async_bytes);
    double dram_share = reads_all > 0 ? fmin(1, nb * p->w.dram_rd / reads_all) : 1;
    double lat_load = d->lat_l2_ns + dram_share * (d->lat_dram_ns - d->lat_l2_ns);
    if (p->stage_bytes > 0 && async_bytes > 0) {
        /* a stage lands a latency plus its transfer at the SM's share of the L2
           bandwidth after it is issued; the latencies of the blocks sharing an SM
           overlap, their transfers do not */
        double fills = async_bytes / p->stage_bytes;
        double inflight = p->stages > 1 ? p->stages - 1 : 1;
        double xfer_ns = p->stage_bytes / (d->l2_gbps * c->eff_l2 / d->sm_count);
        double per_fill_ns = c->pipe_lat * (lat_load / bps + xfer_ns) / inflight;
        r->pipeline_ms = per_sm * fills * per_fill_ns * 1e-6;
    }
    double comp_s = fmax(per_sm * path, path_max) / clk;
    int pipe_bound = r->pipeline_ms * 1e-3 > comp_s;
    comp_s = soft_max(comp_s, r->pipeline_ms * 1e-3, c->pipe_knee);
    if (pipe_bound) {
        cost_note(r->notes, &r->nnotes, "the pipeline is latency-bound: %d stages keep too few loads in "
                  "flight to cover %.0f ns per stage (Little's law)", p->stages, lat_load);
    }
    BlockClk all = block_clk(&p->w, d, c);
    r->res_ms[CR_TENSOR] = per_sm * all.tc / clk * 1e3;
    r->res_ms[CR_SIMT] = per_sm * all.alu / clk * 1e3;
    r->res_ms[CR_SFU] = per_sm * all.sfu / clk * 1e3;
    r->res_ms[CR_SMEM] = fmax(per_sm * smem_clk, smem_clk_max) / clk * 1e3;

    /* memory: L2 sees every global access; DRAM the tensors once plus re-reads
       between blocks that miss L2 */
    double reads = nb * (p->w.gld + p->w.tma_ld + p->w.cpasync);
    double writes = nb * (p->w.gst + p->w.tma_st);
    /* reads the first wave shares (tile order) are fetched once per wave; of
       the rest, l2_miss of the re-reads of the same data miss L2 */
    double wave_reads = nb * p->w.dram_rd;
    double dram_r = wave_reads > p->unique_read
                        ? p->unique_read + (wave_reads - p->unique_read) * c->l2_miss
                        : fmin(reads, p->unique_read > 0 ? p->unique_read : reads);
    double dram_w = writes < p->unique_write || p->unique_write <= 0 ? writes : p->unique_write;
    r->dram_bytes = dram_r + dram_w;
    r->l2_bytes = reads + writes;
    double hbm = d->hbm_gbps * 1e9 * c->eff_hbm;
    double resident = fmin(nb, (double)bps * d->sm_count);
    r->inflight_block = fmax(p->inflight_block, c->loop_mlp * p->inflight_loop);
    r->inflight_bytes = resident * r->inflight_block;
    double lat_little = d->lat_dram_ns * (c->lat_mem > 0 ? c->lat_mem : 1) * 1e-9;
    r->inflight_needed = hbm * lat_little;
    double bw = hbm;
    if (r->inflight_bytes > 0 && c->mlp_knee > 0)   /* a soft knee: bandwidth as a smooth minimum */
        bw = hbm / pow(1 + pow(r->inflight_needed / r->inflight_bytes, c->mlp_knee), 1 / c->mlp_knee);
    else if (r->inflight_bytes > 0 && r->inflight_bytes / lat_little < bw)
        bw = r->inflight_bytes / lat_little;
    r->res_ms[CR_DRAM] = r->dram_bytes / bw * 1e3;
    r->res_ms[CR_L2] = r->l2_bytes / (d->l2_gbps * 1e9 * c->eff_l2) * 1e3;
    /* narrow accesses: the memory pipeline takes requests, not bytes, at a rate */
    r->res_ms[CR_REQ] = c->req_rate > 0 ? nb * p->w.greq / (c->req_rate * 1e9) * 1e3 : 0;

    /* latency not hidden: the first loads of each wave of blocks and the barriers
       of a block whose SM has no other block to switch to */
    double waves = ceil(r->waves > 0 ? r->waves : 1);
    double lat = d->lat_dram_ns * 1e-9;
    if (bps == 1) /* nothing else on the SM: every block's pipeline fill is exposed */
        lat = waves * d->lat_dram_ns * 1e-9 +
              per_sm * p->w.barriers * d->lat_barrier_ns * 1e-9 / (p->nroles ? 4.0 : 1.0);
    r->res_ms[CR_LATENCY] = lat * 1e3;
    double launch = (c->launch_us > 0 ? c->launch_us : d->launch_us) * 1e-6;
    r->res_ms[CR_LAUNCH] = launch * 1e3;

    /* a block's own latency chain (its first load, its barriers), once per round
       of resident blocks: many short blocks wait on it more than on bandwidth */
    double rounds = ceil(nb / ((double)bps * d->sm_count));
    double chain_ns = d->lat_dram_ns + p->w.barriers * d->lat_barrier_ns;
    double rounds_s = c->lat_block * rounds * chain_ns * 1e-9;
    double mem_s = fmax(r->res_ms[CR_DRAM], r->res_ms[CR_L2]) * 1e-3;
    double body = soft_max(soft_max(comp_s, r->res_ms[CR_SMEM] * 1e-3, c->body_knee),
                           soft_max(r->res_ms[CR_REQ] * 1e-3, mem_s, c->body_knee), c->body_knee);
    /* the terms overlap, not perfectly: a share of the others' time shows (ranks
       variants that one term alone ties) */
    if (c->res_exposed > 0) {
        double terms[5] = {comp_s, r->res_ms[CR_SMEM] * 1e-3, r->res_ms[CR_REQ] * 1e-3,
                           r->res_ms[CR_DRAM] * 1e-3, r->res_ms[CR_L2] * 1e-3}, rest = 0;
        for (int i = 0; i < 5; i++)
            rest += terms[i];
        body += c->res_exposed * (rest - body);
    }
    int chain_bound = rounds_s > body;
    if (chain_bound) {
        body = rounds_s;
        cost_note(r->notes, &r->nnotes, "latency-bound blocks: %.0f rounds of %d resident blocks per SM, "
                  "each waiting %.0f ns on its loads and barriers", rounds, bps, c->lat_block * chain_ns);
    }
    double t = body + lat + launch;
    r->time_ms = t * 1e3;

    /* the bottleneck: the resource the body's time comes from */
    int best = CR_SIMT;
    double bv = -1;
    for (int i = 0; i < CR_LATENCY; i++)
        if (r->res_ms[i] > bv) { bv = r->res_ms[i]; best = i; }
    if (comp_s * 1e3 > bv * 1.001)  /* the SIMT and tensor work of a role add up */
        best = all.tc > all.alu ? CR_TENSOR : CR_SIMT;
    if (chain_bound)
        best = CR_LATENCY;
    if (lat + launch > body)
        best = lat > launch ? CR_LATENCY : CR_LAUNCH;
    r->bottleneck = best;
    if (best == CR_DRAM && bw < hbm)
        cost_note(r->notes, &r->nnotes, "DRAM is latency-bound: %.1f MB in flight where %.1f MB "
                  "cover the latency (Little's law)", r->inflight_bytes / 1e6, r->inflight_needed / 1e6);

    /* rates and the roofline */
    int tc_used;
    double peak = peak_flops(p, d, &tc_used);
    r->flops = nb * (p->w.tc_flops[0] + p->w.tc_flops[1] + p->w.tc_flops[2] + (tc_used ? 0 : p->w.flops_simt));
    r->tflops = r->flops / t / 1e12;
    r->gbps = r->dram_bytes / t / 1e9;
    r->intensity = r->dram_bytes > 0 ? r->flops / r->dram_bytes : 0;
    r->peak_tflops = peak / 1e12;
    r->peak_gbps = d->hbm_gbps;
    double ideal_bytes = p->unique_read + p->unique_write;
    r->roofline_ms = fmax(r->flops / peak, ideal_bytes / (d->hbm_gbps * 1e9)) * 1e3;
    r->roofline_fraction = r->time_ms > 0 ? r->roofline_ms / r->time_ms : 0;

    /* roles */
    for (uint32_t i = 0; i < p->nroles && i < COST_MAX_ROLES; i++) {
        snprintf(r->roles[i].name, sizeof r->roles[i].name, "%s", p->roles[i].name);
        r->roles[i].threads = p->roles[i].threads;
        r->roles[i].regs = p->roles[i].regs;
        BlockClk rb = block_clk(&p->roles[i].w, d, c);
        r->roles[i].ms = per_sm * path_clk(rb, overlap) / clk * 1e3;
        r->roles[i].tensor_ms = per_sm * rb.tc / clk * 1e3;
        r->roles[i].simt_ms = per_sm * rb.alu / clk * 1e3;
        r->roles[i].mufu_ms = per_sm * rb.sfu / clk * 1e3;
        r->roles[i].shared_ms = per_sm * rb.smem / clk * 1e3;
    }
    r->nroles = p->nroles;

    r->body_ms[0] = fmax(per_sm * path, path_max) / clk * 1e3;
    r->body_ms[1] = r->pipeline_ms;
    r->body_ms[2] = r->res_ms[CR_SMEM];
    r->body_ms[3] = fmax(fmax(fmax(r->res_ms[CR_DRAM], r->res_ms[CR_L2]), r->res_ms[CR_REQ]), rounds_s * 1e3);
    double widen = 0;
    uncertainty(p, d, r, &widen);
    family(p, c, r, &widen);
    r->lo_ms = r->time_ms * (1 - c->rel_err - 0.5 * widen > 0.2 ? 1 - c->rel_err - 0.5 * widen : 0.2);
    r->hi_ms = r->time_ms * (1 + c->rel_err + widen);
    cost_note(r->notes, &r->nnotes, "L2 reuse between blocks: the first wave's shared tiles "
              "(by tile order) are read once per wave; %.2f of the other re-reads miss L2", c->l2_miss);
    cost_note(r->notes, &r->nnotes, "calibration: %s", c->source);
}
