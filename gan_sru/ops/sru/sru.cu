// Fused SRU elementwise recurrence: CUDA kernels, compiled at run time by NVRTC (CuPy RawModule).
//
// CUDA C++ without #include: NVRTC provides expf/tanhf itself. Launched by gan_sru/ops/sru/cuda.py.
// Every kernel comes in two storage types: float32 (sru_fwd, ...) and float16 (sru_fwd_f16, ...: nnabla's
// `half` type config), both computing in float32. A float16 value is held as its IEEE binary16 bits
// (sru_half) and converted by one PTX instruction on the device (round to nearest even on the way back),
// by the same rounding in plain C++ where the source is compiled for the host (the tests' emulation).
// In float16 the per-batch-row dbias/dwc partials stay float32 (they are sums over time, later summed
// over the batch); everything else is stored in the storage type.
// The math, layouts and outputs are the "SRU recurrence kernel contract" that gan_sru/ops/sru/reference.py
// implements in NumPy. Layouts (C-contiguous, time-major, d innermost):
//
//   u    (L, B, R, K, D)   j = 0: z, 1: f pre-activation, 2: r pre-activation, 3: x' (K == 4 only)
//   x    (L, B, X, D)      skip input (K == 3 only), X = x_dirs: 1, both directions read the same x, or R,
//                          direction r reads x[:, :, r] (the official SRU's bidirectional layer on an R*D input)
//   bias (R, 2, D)         b_f, b_r            wc (R, 2, D) or null: v_f, v_r (null = 0)
//   c0   (B, R, D) or null (null = zeros)      mask (L, B) or null: nonzero = valid step
//   h, c (L, B, R, D)
//
// One thread owns one column (b, r, d), col = (b * R + r) * D + d, and walks time: direction 0 walks
// t = 0..L-1, direction 1 walks t = L-1..0 (backward: the reverse). Consecutive threads have consecutive
// d, so every load and store of a step is coalesced. A thread has little work per step and only B*R*D
// threads exist, so the loads of the next steps (SRU_PREFETCH_FWD / _BWD of them) are kept in flight in a
// ring of registers while a step is computed: the memory latency of a step overlaps the ones before it.
// Every output of the backward takes an accumulate flag: out = accum ? out + v : v (nnabla's `accum`).

#define SRU_BLOCK 128  // threads per block; cuda.py launches with exactly this many
// Steps whose loads each thread keeps in flight, forward and backward (cuda.py passes its PREFETCH).
#ifndef SRU_PREFETCH_FWD
#define SRU_PREFETCH_FWD 8
#endif
#ifndef SRU_PREFETCH_BWD
#define SRU_PREFETCH_BWD 4
#endif

typedef unsigned short sru_half;  // the bits of an IEEE binary16 value

#ifdef __CUDA_ARCH__
__device__ __forceinline__ float sru_h2f(const sru_half v)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}
__device__ __forceinline__ sru_half sru_f2h(const float f)
{
    sru_half v;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v) : "f"(f));
    return v;
}
#else  // the host (the tests' emulation): the same conversions on the bits
union sru_bits { float f; unsigned int u; };

inline float sru_h2f(const sru_half v)
{
    const unsigned int s = (unsigned int)(v & 0x8000u) << 16;
    unsigned int e = (v >> 10) & 0x1fu, m = v & 0x3ffu;
    sru_bits b;
    if (e == 31) {
        b.u = s | 0x7f800000u | (m << 13);  // inf, nan
    } else if (e != 0) {
        b.u = s | ((e + 112) << 23) | (m << 13);
    } else if (m == 0) {
        b.u = s;
    } else {  // subnormal: normalise
        e = 113;
        while (!(m & 0x400u)) { m <<= 1; --e; }
        b.u = s | (e << 23) | ((m & 0x3ffu) << 13);
    }
    return b.f;
}

inline sru_half sru_f2h(const float f)  // round to nearest, ties to even
{
    sru_bits b;
    b.f = f;
    const unsigned int s = (b.u >> 16) & 0x8000u, a = b.u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (sru_half)(s | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
    const unsigned int e = a >> 23;
    unsigned int r, rem, half;
    if (e >= 113) {  // a normal half, or inf when the rounding carries past 65504
        if (e > 142) return (sru_half)(s | 0x7c00u);
        r = ((e - 112) << 10) | ((a & 0x7fffffu) >> 13);
        rem = a & 0x1fffu;
        half = 0x1000u;
    } else {  // a subnormal half (or 0): round(|f| * 2^24)
        const unsigned int shift = 126 - e;
        if (shift > 24) return (sru_half)s;
        const unsigned int m = (a & 0x7fffffu) | 0x800000u;
        r = m >> shift;
        rem = m & ((1u << shift) - 1);
        half = 1u << (shift - 1);
    }
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (sru_half)(s | r);
}
#endif

// Loads and stores in the storage type; arithmetic is float32. sru_f converts a value as loaded, sru_one is 1.
__device__ __forceinline__ float sru_f(const float v) { return v; }
__device__ __forceinline__ float sru_f(const sru_half v) { return sru_h2f(v); }
__device__ __forceinline__ float sru_one(const float*) { return 1.0f; }
__device__ __forceinline__ sru_half sru_one(const sru_half*) { return (sru_half)0x3c00u; }
__device__ __forceinline__ float sru_ld(const float* p) { return *p; }
__device__ __forceinline__ float sru_ld(const sru_half* p) { return sru_h2f(*p); }
__device__ __forceinline__ void sru_st(float* p, const float v) { *p = v; }
__device__ __forceinline__ void sru_st(sru_half* p, const float v) { *p = sru_f2h(v); }

// The gates' sigmoid. On the device: the fast exponential and division (ex2.approx and rcp.approx; the
// GPU tests hold the kernels to the float64 reference within 1e-5); the IEEE division's slow-path call
// lengthened every step of the forward's dependency chain and spilled on sm_80. The host (the emulation)
// computes it exactly.
#ifdef __CUDA_ARCH__
__device__ __forceinline__ float sru_sigmoid(const float a) { return __fdividef(1.0f, 1.0f + __expf(-a)); }
#else
inline float sru_sigmoid(const float a) { return 1.0f / (1.0f + expf(-a)); }
#endif

template <typename T>
__device__ __forceinline__ void sru_store(T* p, const float v, const int accum)
{
    sru_st(p, accum ? sru_ld(p) + v : v);
}

// A thread's column (b, r, d): its indices, the gate parameters it reads, and where its u and x' start.
template <typename T>
struct SruColumn {
    int d, r, b;
    long long br;               // b * R + r
    float b_f, b_r, v_f, v_r;   // v = 0 when wc is null
    const T* up;                // this column of u at t = 0
    const T* xp;                // this column of x' at t = 0: u[..., 3, :] when K == 4, else x (its r-th part
                                // when x_dirs == R)
    long long x_step;           // x' stride between steps
};

template <typename T>
__device__ __forceinline__ SruColumn<T> sru_column(const long long col, const T* __restrict__ u,
                                                   const T* __restrict__ x, const T* __restrict__ bias,
                                                   const T* __restrict__ wc, const int B, const int R,
                                                   const int K, const int D, const int x_dirs)
{
    SruColumn<T> q;
    q.d = (int)(col % D);
    q.br = col / D;
    q.r = (int)(q.br % R);
    q.b = (int)(q.br / R);
    q.b_f = sru_ld(bias + (2 * q.r) * D + q.d);
    q.b_r = sru_ld(bias + (2 * q.r + 1) * D + q.d);
    q.v_f = wc ? sru_ld(wc + (2 * q.r) * D + q.d) : 0.0f;
    q.v_r = wc ? sru_ld(wc + (2 * q.r + 1) * D + q.d) : 0.0f;
    q.up = u + q.br * K * D + q.d;
    q.xp = (K == 4) ? q.up + 3 * D : x + ((long long)q.b * x_dirs + (x_dirs > 1 ? q.r : 0)) * D + q.d;
    q.x_step = (K == 4) ? (long long)B * R * D * K : (long long)B * x_dirs * D;
    return q;
}

// What one step of a column reads, as loaded (in the storage type: converted when the step is computed, so
// that no conversion waits for a load in flight). x' is u[..., 3, :] when K == 4, else x; m is the mask.
template <typename T>
struct SruStep {
    T z, f, r, x, m;
};

// One step's reads: u at `pu` (z, f, r at 0, D, 2D), x' at `px`, the mask at `pm` (null: every step valid).
template <typename T>
__device__ __forceinline__ SruStep<T> sru_load(const T* __restrict__ pu, const T* __restrict__ px,
                                               const T* __restrict__ pm, const int D)
{
    SruStep<T> s;
    s.z = pu[0];
    s.f = pu[D];
    s.r = pu[2 * D];
    s.x = px[0];
    s.m = pm ? pm[0] : sru_one(pu);
    return s;
}

// The backward's extra reads of a step: dh, dc and cp, the c of the step before it in the forward walk
// (`pc` null: the walk's first step, whose c before is c0). Null dh, dc or c0 read `zero` instead.
template <typename T>
struct SruGradStep {
    T dh, dc, cp;
};

template <typename T>
__device__ __forceinline__ SruGradStep<T> sru_load_grad(const T* __restrict__ pdh, const T* __restrict__ pdc,
                                                        const T* __restrict__ pc, const T* __restrict__ c0,
                                                        const T zero)
{
    SruGradStep<T> g;
    g.dh = pdh ? pdh[0] : zero;
    g.dc = pdc ? pdc[0] : zero;
    g.cp = pc ? pc[0] : (c0 ? c0[0] : zero);
    return g;
}

// Software pipelining, both kernels: slot k of `ahead` holds the reads of step i0 + k. A step's slot is
// refilled with the reads of the step P later (P = SRU_PREFETCH_FWD or _BWD) once the step is computed,
// so the load writes the slot's own register (the value it held is dead by then) and nothing waits for a
// load before that load's own step. The inner loop is unrolled: every slot is a fixed register. (Refilling
// a slot before its step is computed made the compiler load into a spare register and copy it into the
// slot at the end of the step, and that copy waited for the load: 0.56 of the copy's bandwidth instead of
// 0.96 on an H200.) The offsets move by a constant stride a step (`*_dt`), no multiplication.

// h, c <- forward recurrence. activation: 1 tanh, 0 identity. x is read only when K == 3.
template <typename T>
__device__ __forceinline__ void sru_fwd_impl(const T* __restrict__ u, const T* __restrict__ x,
                                             const T* __restrict__ bias, const T* __restrict__ wc,
                                             const T* __restrict__ c0, const T* __restrict__ mask,
                                             T* __restrict__ h, T* __restrict__ c,
                                             const int L, const int B, const int R, const int K, const int D,
                                             const int activation, const float scale_x, const int x_dirs)
{
    const long long cols = (long long)B * R * D;  // also the stride of h and c between steps
    const long long u_step = cols * K;
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    const int P = SRU_PREFETCH_FWD;
    for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < cols; col += grid_stride) {
        const SruColumn<T> q = sru_column(col, u, x, bias, wc, B, R, K, D, x_dirs);
        const float b_f = q.b_f, b_r = q.b_r, v_f = q.v_f, v_r = q.v_r;
        float c_prev = c0 ? sru_ld(c0 + col) : 0.0f;
        const int dt = (q.r == 0) ? 1 : -1;
        const long long t0 = (q.r == 0) ? 0 : L - 1;
        const long long u_dt = dt * u_step, x_dt = dt * q.x_step, m_dt = dt * (long long)B, o_dt = dt * cols;

        SruStep<T> ahead[P];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const long long t = t0 + k * dt;
            if (k < L) ahead[k] = sru_load(q.up + t * u_step, q.xp + t * q.x_step, mask ? mask + t * B + q.b : 0, D);
        }
        // offsets of the next refill (step P) and of the step written now
        long long ou = (t0 + P * dt) * u_step, ox = (t0 + P * dt) * q.x_step;
        long long om = (t0 + P * dt) * B + q.b, o = t0 * cols + col;
        for (int i0 = 0; i0 < L; i0 += P) {
#pragma unroll
            for (int k = 0; k < P; ++k) {
                const int i = i0 + k;
                if (i >= L) break;
                const float z = sru_f(ahead[k].z), uf = sru_f(ahead[k].f), ur = sru_f(ahead[k].r);
                const float xv = sru_f(ahead[k].x), m = sru_f(ahead[k].m);
                if (m != 0.0f) {
                    const float f = sru_sigmoid(uf + b_f + v_f * c_prev);
                    const float rr = sru_sigmoid(ur + b_r + v_r * c_prev);
                    const float cc = f * (c_prev - z) + z;
                    const float g = activation ? tanhf(cc) : cc;
                    const float xs = scale_x * xv;
                    sru_st(h + o, rr * (g - xs) + xs);
                    sru_st(c + o, cc);
                    c_prev = cc;
                } else {  // padded: c carries over, h is 0
                    sru_st(h + o, 0.0f);
                    sru_st(c + o, c_prev);
                }
                if (i + P < L) ahead[k] = sru_load(q.up + ou, q.xp + ox, mask ? mask + om : 0, D);
                ou += u_dt;
                ox += x_dt;
                om += m_dt;
                o += o_dt;
            }
        }
    }
}

// Gradients of the recurrence. Inputs as sru_fwd plus c (the forward's c), dh and dc (L, B, R, D; null =
// zeros). Outputs (each null = not wanted, each with its accumulate flag):
//   du         (L, B, R, K, D)  (du[..., 3, :] = d x' when K == 4)
//   dxs        (L, B, R, D)     d x per direction (K == 3 only; for R == 1 or x_dirs == R this is dx itself)
//   dbias_part (B, R, 2, D)     per-batch-row partial sums, float32 (for B == 1 in float32 this is dbias)
//   dwc_part   (B, R, 2, D)     per-batch-row partial sums of the v gradients (computed even when wc is null)
//   dc0        (B, R, D)
// Padded steps produce no gradient (du = 0, dxs = 0) and pass the running dc through unchanged.
template <typename T>
__device__ __forceinline__ void sru_bwd_impl(
    const T* __restrict__ u, const T* __restrict__ x, const T* __restrict__ bias, const T* __restrict__ wc,
    const T* __restrict__ c0, const T* __restrict__ mask, const T* __restrict__ c, const T* __restrict__ dh,
    const T* __restrict__ dc, T* __restrict__ du, T* __restrict__ dxs, float* __restrict__ dbias_part,
    float* __restrict__ dwc_part, T* __restrict__ dc0, const int L, const int B, const int R, const int K,
    const int D, const int activation, const float scale_x, const int accum_du, const int accum_dxs,
    const int accum_dbias, const int accum_dwc, const int accum_dc0, const int x_dirs)
{
    const long long cols = (long long)B * R * D;
    const long long u_step = cols * K;
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    const int P = SRU_PREFETCH_BWD;
    for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < cols; col += grid_stride) {
        const SruColumn<T> q = sru_column(col, u, x, bias, wc, B, R, K, D, x_dirs);
        const float b_f = q.b_f, b_r = q.b_r, v_f = q.v_f, v_r = q.v_r;
        const T zero = T(0);  // the storage type's 0 (float16: the bits 0)
        const T* c0p = c0 ? c0 + col : 0;
        T* dup = du ? du + q.br * K * D + q.d : 0;
        // The walk goes against the forward's, from its last step; the forward's step before walk step i
        // is walk step i + 1 (o + o_dt), or c0 for the walk's last step.
        const int dt = (q.r == 0) ? -1 : 1;
        const long long t0 = (q.r == 0) ? L - 1 : 0;
        const long long u_dt = dt * u_step, x_dt = dt * q.x_step, m_dt = dt * (long long)B, o_dt = dt * cols;

        SruStep<T> ahead[P];
        SruGradStep<T> ahead_g[P];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const long long t = t0 + k * dt, ok = t * cols + col;
            if (k < L) {
                ahead[k] = sru_load(q.up + t * u_step, q.xp + t * q.x_step, mask ? mask + t * B + q.b : 0, D);
                ahead_g[k] = sru_load_grad(dh ? dh + ok : 0, dc ? dc + ok : 0, (k + 1 < L) ? c + ok + o_dt : 0, c0p,
                                           zero);
            }
        }
        long long ou = (t0 + P * dt) * u_step, ox = (t0 + P * dt) * q.x_step;
        long long om = (t0 + P * dt) * B + q.b, on = (t0 + P * dt) * cols + col;
        long long o = t0 * cols + col, ud = t0 * u_step;  // the step written now: its state and u offsets
        float c_cur = (L > 0) ? sru_ld(c + o) : 0.0f;  // c at the current step
        float dcur = 0.0f, s_bf = 0.0f, s_br = 0.0f, s_vf = 0.0f, s_vr = 0.0f;
        for (int i0 = 0; i0 < L; i0 += P) {
#pragma unroll
            for (int k = 0; k < P; ++k) {
                const int i = i0 + k;
                if (i >= L) break;
                const float z = sru_f(ahead[k].z), uf = sru_f(ahead[k].f), ur = sru_f(ahead[k].r);
                const float xv = sru_f(ahead[k].x), m = sru_f(ahead[k].m);
                const float dhv = sru_f(ahead_g[k].dh), cp = sru_f(ahead_g[k].cp);
                dcur += sru_f(ahead_g[k].dc);
                if (m != 0.0f) {
                    const float f = sru_sigmoid(uf + b_f + v_f * cp);
                    const float rr = sru_sigmoid(ur + b_r + v_r * cp);
                    const float g = activation ? tanhf(c_cur) : c_cur;
                    const float dg = activation ? 1.0f - g * g : 1.0f;
                    const float xs = scale_x * xv;
                    const float dct = dcur + dhv * rr * dg;
                    const float d_r = dhv * (g - xs) * rr * (1.0f - rr);
                    const float d_xs = dhv * (1.0f - rr) * scale_x;
                    const float d_f = dct * (cp - z) * f * (1.0f - f);
                    const float d_z = dct * (1.0f - f);
                    dcur = dct * f + d_f * v_f + d_r * v_r;
                    s_bf += d_f;
                    s_br += d_r;
                    s_vf += d_f * cp;
                    s_vr += d_r * cp;
                    if (dup) {
                        T* p = dup + ud;
                        sru_store(p, d_z, accum_du);
                        sru_store(p + D, d_f, accum_du);
                        sru_store(p + 2 * D, d_r, accum_du);
                        if (K == 4) sru_store(p + 3 * D, d_xs, accum_du);
                    }
                    if (K == 3 && dxs) sru_store(dxs + o, d_xs, accum_dxs);
                } else {  // padded: no gradient here, dcur passes through
                    if (dup && !accum_du) {
                        T* p = dup + ud;
                        for (int j = 0; j < K; ++j) sru_st(p + j * D, 0.0f);
                    }
                    if (K == 3 && dxs && !accum_dxs) sru_st(dxs + o, 0.0f);
                }
                c_cur = cp;
                if (i + P < L) {
                    ahead[k] = sru_load(q.up + ou, q.xp + ox, mask ? mask + om : 0, D);
                    ahead_g[k] = sru_load_grad(dh ? dh + on : 0, dc ? dc + on : 0, (i + P + 1 < L) ? c + on + o_dt : 0,
                                               c0p, zero);
                }
                ou += u_dt;
                ox += x_dt;
                om += m_dt;
                on += o_dt;
                o += o_dt;
                ud += u_dt;
            }
        }
        if (dc0) sru_store(dc0 + col, dcur, accum_dc0);
        const long long pb = q.br * 2 * D + q.d;  // (B, R, 2, D): ((b * R + r) * 2 + j) * D + d
        if (dbias_part) {
            sru_store(dbias_part + pb, s_bf, accum_dbias);
            sru_store(dbias_part + pb + D, s_br, accum_dbias);
        }
        if (dwc_part) {
            sru_store(dwc_part + pb, s_vf, accum_dwc);
            sru_store(dwc_part + pb + D, s_vr, accum_dwc);
        }
    }
}

// out[i] (accum ? += : =) sum over b of part[b, i], b in order 0..B-1 (deterministic, no atomics).
// part (B, n) float32, out (n,): the per-batch-row dbias / dwc partials reduced to (R, 2, D), n = R * 2 * D.
template <typename T>
__device__ __forceinline__ void sru_reduce_batch_impl(const float* __restrict__ part, T* __restrict__ out,
                                                      const int B, const int n, const int accum)
{
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += grid_stride) {
        float s = 0.0f;
        for (int b = 0; b < B; ++b) s += part[(long long)b * n + i];
        sru_store(out + i, s, accum);
    }
}

// dx[row, d] (accum ? += : =) sum over r of dxs[row, r, d], r in order; dxs (rows, R, D), dx (rows, D),
// rows = L * B. With R == 0 (dxs unused) it writes zeros: the x gradient when K == 4 (x is not read).
template <typename T>
__device__ __forceinline__ void sru_sum_dirs_impl(const T* __restrict__ dxs, T* __restrict__ dx, const int rows,
                                                  const int R, const int D, const int accum)
{
    const long long n = (long long)rows * D;
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += grid_stride) {
        const long long row = i / D;
        const int d = (int)(i % D);
        float s = 0.0f;
        for (int r = 0; r < R; ++r) s += sru_ld(dxs + (row * R + r) * D + d);
        sru_store(dx + i, s, accum);
    }
}

// The kernels: one extern "C" entry per storage type (float32, and float16 as sru_half with the suffix _f16).
#define SRU_KERNELS(T, SUFFIX)                                                                                 \
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)                                                       \
sru_fwd##SUFFIX(const T* __restrict__ u, const T* __restrict__ x, const T* __restrict__ bias,                \
                const T* __restrict__ wc, const T* __restrict__ c0, const T* __restrict__ mask,             \
                T* __restrict__ h, T* __restrict__ c, const int L, const int B, const int R, const int K,   \
                const int D, const int activation, const float scale_x, const int x_dirs)                   \
{                                                                                                             \
    sru_fwd_impl(u, x, bias, wc, c0, mask, h, c, L, B, R, K, D, activation, scale_x, x_dirs);                 \
}                                                                                                             \
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)                                                       \
sru_bwd##SUFFIX(const T* __restrict__ u, const T* __restrict__ x, const T* __restrict__ bias,                \
                const T* __restrict__ wc, const T* __restrict__ c0, const T* __restrict__ mask,             \
                const T* __restrict__ c, const T* __restrict__ dh, const T* __restrict__ dc,                \
                T* __restrict__ du, T* __restrict__ dxs, float* __restrict__ dbias_part,                    \
                float* __restrict__ dwc_part, T* __restrict__ dc0, const int L, const int B, const int R,   \
                const int K, const int D, const int activation, const float scale_x, const int accum_du,    \
                const int accum_dxs, const int accum_dbias, const int accum_dwc, const int accum_dc0,       \
                const int x_dirs)                                                                           \
{                                                                                                             \
    sru_bwd_impl(u, x, bias, wc, c0, mask, c, dh, dc, du, dxs, dbias_part, dwc_part, dc0, L, B, R, K, D,      \
                 activation, scale_x, accum_du, accum_dxs, accum_dbias, accum_dwc, accum_dc0, x_dirs);        \
}                                                                                                             \
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)                                                       \
sru_reduce_batch##SUFFIX(const float* __restrict__ part, T* __restrict__ out, const int B, const int n,      \
                         const int accum)                                                                    \
{                                                                                                             \
    sru_reduce_batch_impl(part, out, B, n, accum);                                                            \
}                                                                                                             \
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)                                                       \
sru_sum_dirs##SUFFIX(const T* __restrict__ dxs, T* __restrict__ dx, const int rows, const int R, const int D, \
                     const int accum)                                                                        \
{                                                                                                             \
    sru_sum_dirs_impl(dxs, dx, rows, R, D, accum);                                                            \
}

SRU_KERNELS(float, )
SRU_KERNELS(sru_half, _f16)
