#!/usr/bin/env python3
"""gen_asm.py - writes lib/ff/ff_asm.h: x86-64 BMI2+ADX (mulx/adcx/adox) Montgomery
multiplication and squaring for 4 and 6 limbs as GCC inline assembly.
Run once: python3 gen_asm.py > ff_asm.h

Algorithm (CIOS, one outer iteration per limb of b, registers rotate instead of shifting):
  state T = t[0..N-1] < 2p;  A: T += a*b[i] (N+1 words, two carry chains: adox adds the low
  halves, adcx the high halves);  B: m = t[0]*inv, T += m*p, drop t[0] (now zero).
  Valid because every modulus has its top bit clear, so T < 2p fits N words after each round.
The final conditional subtraction of p is done in C (ff_arith.h reduce_once_).
Squaring: the cross products a[i]*a[j] (i<j) are computed once, doubled, the squares added
(2N-word product), then N rounds of Montgomery reduction of the low half."""

import sys


def mul_asm(n):
    T = ['%%[t%d]' % k for k in range(n + 1)]
    L, H = '%[lo]', '%[hi]'
    s = []
    for i in range(n):
        s.append('movq %d(%%[b]), %%%%rdx' % (8 * i))
        if i == 0:
            s.append('xorl %k[lo], %k[lo]')
            s.append('mulxq 0(%%[a]), %s, %s' % (T[0], T[1]))
            for j in range(1, n):
                s.append('mulxq %d(%%[a]), %s, %s' % (8 * j, L, T[j + 1]))
                s.append('adcxq %s, %s' % (L, T[j]))
            s.append('movl $0, %k[lo]')
            s.append('adcxq %s, %s' % (L, T[n]))
        else:
            s.append('xorl %s, %s' % (T[n].replace('%[', '%k['), T[n].replace('%[', '%k[')))
            for j in range(n):
                s.append('mulxq %d(%%[a]), %s, %s' % (8 * j, L, H))
                s.append('adoxq %s, %s' % (L, T[j]))
                s.append('adcxq %s, %s' % (H, T[j + 1]))
            s.append('movl $0, %k[lo]')
            s.append('adoxq %s, %s' % (L, T[n]))
        s += reduce_round(n, T, L, H)
        T = T[1:] + T[:1]
    if n == 4:
        s += final_sub_cmov(T[:n], [T[n], L, H, '%%rdx'])
    else:
        s += final_sub_mask(T[:n], H, L)
    return s, T[:n]


def final_sub_cmov(T, S):
    """T (< 2p) -> T - p if T >= p; S are scratch registers."""
    s = ['movq %s, %s' % (t, x) for t, x in zip(T, S)]
    for j in range(len(T)):
        s.append('%s %%[p%d], %s' % ('subq' if j == 0 else 'sbbq', j, S[j]))
    for j in range(len(T)):
        s.append('cmovncq %s, %s' % (S[j], T[j]))
    return s


def final_sub_mask(T, M, X):
    """T (< 2p) -> T - p if T >= p, in place: subtract p, add it back if that borrowed."""
    s = []
    for j in range(len(T)):
        s.append('%s %%[p%d], %s' % ('subq' if j == 0 else 'sbbq', j, T[j]))
    s += add_back_masked(T, M, X)
    return s


def add_back_masked(T, M, X):
    """after a subtraction chain (CF = borrow): T += p if borrow. cmov/adcx keep ZF."""
    s = ['sbbq %s, %s' % (M, M), 'clc']
    for j in range(len(T)):
        s.append('movl $0, %s' % X.replace('%[', '%k['))
        s.append('cmovnzq %%[p%d], %s' % (j, X))
        s.append('adcxq %s, %s' % (X, T[j]))
    return s


def add_asm(n):
    T = ['%%[t%d]' % k for k in range(n)]
    S = ['%%[s%d]' % k for k in range(n)]
    s = ['movq %d(%%[a]), %s' % (8 * j, T[j]) for j in range(n)]
    for j in range(n):
        s.append('%s %d(%%[b]), %s' % ('addq' if j == 0 else 'adcq', 8 * j, T[j]))
    if n == 4:
        s += final_sub_cmov(T, S)
    else:
        s += final_sub_mask(T, S[0], S[1])
    return s, T


def sub_asm(n):
    T = ['%%[t%d]' % k for k in range(n)]
    S = ['%%[s%d]' % k for k in range(n)]
    s = ['movq %d(%%[a]), %s' % (8 * j, T[j]) for j in range(n)]
    for j in range(n):
        s.append('%s %d(%%[b]), %s' % ('subq' if j == 0 else 'sbbq', 8 * j, T[j]))
    s += add_back_masked(T, S[0], S[1])
    return s, T


def reduce_round(n, T, L, H):
    """T[0..n] (n+1 words) += m*p with m = T[0]*inv; T[0] becomes 0."""
    s = ['movq %s, %%%%rdx' % T[0],
         'imulq %[inv], %%rdx',
         'xorl %k[lo], %k[lo]']
    for j in range(n):
        s.append('mulxq %%[p%d], %s, %s' % (j, L, H))
        s.append('adoxq %s, %s' % (L, T[j]))
        s.append('adcxq %s, %s' % (H, T[j + 1]))
    s.append('movl $0, %k[lo]')
    s.append('adoxq %s, %s' % (L, T[n]))
    return s


def sqr_asm(n):
    """2n-word square in registers is too many for n = 6; for n = 4 it is 8 words.
    Only generated for n = 4: product in u[0..7], then 4 reduction rounds."""
    assert n == 4
    # registers: u0..u7 (8), lo, hi, rdx  -> 11 + a pointer
    U = ['%%[u%d]' % k for k in range(8)]
    L, H = '%[lo]', '%[hi]'
    s = []
    # cross products: a0*(a1,a2,a3) -> u1..u4 ; a1*(a2,a3) -> u3..u5 ; a2*a3 -> u5,u6
    s.append('movq 0(%[a]), %%rdx')
    s.append('xorl %k[u7], %k[u7]')          # u7 = 0, clear flags
    s.append('mulxq 8(%%[a]), %s, %s' % (U[1], U[2]))
    s.append('mulxq 16(%%[a]), %s, %s' % (L, U[3]))
    s.append('adcxq %s, %s' % (L, U[2]))
    s.append('mulxq 24(%%[a]), %s, %s' % (L, U[4]))
    s.append('adcxq %s, %s' % (L, U[3]))
    s.append('movq 8(%[a]), %%rdx')
    s.append('mulxq 24(%%[a]), %s, %s' % (L, U[5]))
    s.append('adcxq %s, %s' % (L, U[4]))
    s.append('adcxq %s, %s' % (U[7], U[5]))       # u5 += CF (u7 = 0)
    # a1*a2 into u3,u4 ; OF chain
    s.append('mulxq 16(%%[a]), %s, %s' % (L, H))
    s.append('adoxq %s, %s' % (L, U[3]))
    s.append('adoxq %s, %s' % (H, U[4]))
    s.append('movq 16(%[a]), %%rdx')
    s.append('mulxq 24(%%[a]), %s, %s' % (L, U[6]))
    s.append('adoxq %s, %s' % (L, U[5]))
    s.append('adoxq %s, %s' % (U[7], U[6]))       # u6 += OF
    # double u1..u6 into u1..u7 and add squares: u0,u1 += a0^2, u2,u3 += a1^2, ...
    s.append('xorl %k[lo], %k[lo]')            # clear CF/OF (u7 still 0)
    s.append('movq 0(%[a]), %%rdx')
    s.append('mulxq %%%%rdx, %s, %s' % (U[0], H))
    s.append('adcxq %s, %s' % (U[1], U[1]))      # u1 = 2*u1 + CF
    s.append('adoxq %s, %s' % (H, U[1]))
    s.append('movq 8(%[a]), %%rdx')
    s.append('mulxq %%%%rdx, %s, %s' % (L, H))
    s.append('adcxq %s, %s' % (U[2], U[2]))
    s.append('adoxq %s, %s' % (L, U[2]))
    s.append('adcxq %s, %s' % (U[3], U[3]))
    s.append('adoxq %s, %s' % (H, U[3]))
    s.append('movq 16(%[a]), %%rdx')
    s.append('mulxq %%%%rdx, %s, %s' % (L, H))
    s.append('adcxq %s, %s' % (U[4], U[4]))
    s.append('adoxq %s, %s' % (L, U[4]))
    s.append('adcxq %s, %s' % (U[5], U[5]))
    s.append('adoxq %s, %s' % (H, U[5]))
    s.append('movq 24(%[a]), %%rdx')
    s.append('mulxq %%%%rdx, %s, %s' % (L, H))
    s.append('adcxq %s, %s' % (U[6], U[6]))
    s.append('adoxq %s, %s' % (L, U[6]))
    s.append('movl $0, %k[lo]')
    s.append('adcxq %s, %s' % (L, U[7]))          # u7 = CF (doubling carry)
    s.append('adoxq %s, %s' % (H, U[7]))          # u7 += hi(a3^2) + OF
    # Montgomery reduction of the low half u0..u3 (window of 5 with z = 0 on top, rotating),
    # result <= p; then add the high half u4..u7: total < p + p/2 < 2p (p < 2^255).
    W = U[:4] + ['%[a]']
    s.append('xorl %k[a], %k[a]')
    for i in range(4):
        s += reduce_round(4, W, L, H)
        W = W[1:] + W[:1]
    s.append('addq %s, %s' % (U[4], W[0]))
    s.append('adcq %s, %s' % (U[5], W[1]))
    s.append('adcq %s, %s' % (U[6], W[2]))
    s.append('adcq %s, %s' % (U[7], W[3]))
    s += final_sub_cmov(W[:4], [W[4], L, H, '%%rdx'])
    return s, W[:4]



def mulwide_asm(n):
    """r[0..2n) = a*b (plain integers < 2^(64n)); finished limbs are stored as they complete."""
    T = ['%%[t%d]' % k for k in range(n + 1)]
    L, H = '%[lo]', '%[hi]'
    s = []
    for i in range(n):
        s.append('movq %d(%%[b]), %%%%rdx' % (8 * i))
        if i == 0:
            s.append('xorl %k[lo], %k[lo]')
            s.append('mulxq 0(%%[a]), %s, %s' % (T[0], T[1]))
            for j in range(1, n):
                s.append('mulxq %d(%%[a]), %s, %s' % (8 * j, L, T[j + 1]))
                s.append('adcxq %s, %s' % (L, T[j]))
            s.append('movl $0, %k[lo]')
            s.append('adcxq %s, %s' % (L, T[n]))
        else:
            s.append('xorl %s, %s' % (T[n].replace('%[', '%k['), T[n].replace('%[', '%k[')))
            for j in range(n):
                s.append('mulxq %d(%%[a]), %s, %s' % (8 * j, L, H))
                s.append('adoxq %s, %s' % (L, T[j]))
                s.append('adcxq %s, %s' % (H, T[j + 1]))
            s.append('movl $0, %k[lo]')
            s.append('adoxq %s, %s' % (L, T[n]))
        s.append('movq %s, %d(%%[r])' % (T[0], 8 * i))
        T = T[1:] + T[:1]
    for j in range(n):
        s.append('movq %s, %d(%%[r])' % (T[j], 8 * (n + j)))
    return s, []


def redc_asm(n):
    """r = u / 2^(64n) mod p for u < p 2^(64n) (2n limbs at [a]): Montgomery reduction of the
    low half (result <= p), plus the high half (< p), minus p if needed."""
    T = ['%%[t%d]' % k for k in range(n + 1)]
    L, H = '%[lo]', '%[hi]'
    s = ['movq %d(%%[a]), %s' % (8 * j, T[j]) for j in range(n)]
    s.append('xorl %s, %s' % (T[n].replace('%[', '%k['), T[n].replace('%[', '%k[')))
    for i in range(n):
        s += reduce_round(n, T, L, H)
        T = T[1:] + T[:1]
    for j in range(n):
        s.append('%s %d(%%[a]), %s' % ('addq' if j == 0 else 'adcq', 8 * (n + j), T[j]))
    if n == 4:
        s += final_sub_cmov(T[:n], [T[n], L, H, '%%rdx'])
    else:
        s += final_sub_mask(T[:n], H, L)
    s += ['movq %s, %d(%%[r])' % (T[j], 8 * j) for j in range(n)]
    return s, T[:n]


def wsub_asm(n, addp):
    """r = a - b over 2n limbs; with addp, p*2^(64n) is added back if that borrowed."""
    X, Y, M = '%[t0]', '%[t1]', '%[t2]'
    s = []
    for j in range(2 * n):
        s.append('movq %d(%%[a]), %s' % (8 * j, X))
        s.append('%s %d(%%[b]), %s' % ('subq' if j == 0 else 'sbbq', 8 * j, X))
        s.append('movq %s, %d(%%[r])' % (X, 8 * j))
    if addp:
        s += ['sbbq %s, %s' % (M, M), 'clc']
        for j in range(n):
            s.append('movq %d(%%[r]), %s' % (8 * (n + j), X))
            s.append('movl $0, %k[t1]')
            s.append('cmovnzq %%[p%d], %s' % (j, Y))
            s.append('adcxq %s, %s' % (Y, X))
            s.append('movq %s, %d(%%[r])' % (X, 8 * (n + j)))
    return s, []


def addnr_asm(n):
    """r = a + b without reduction (caller guarantees no carry out of n limbs)."""
    X = '%[t0]'
    s = []
    for j in range(n):
        s.append('movq %d(%%[a]), %s' % (8 * j, X))
        s.append('%s %d(%%[b]), %s' % ('addq' if j == 0 else 'adcq', 8 * j, X))
        s.append('movq %s, %d(%%[r])' % (X, 8 * j))
    return s, []


def c_wide(name, n, body, kind):
    """kinds: mulwide (r 2n, a n, b n), redc (r n, a 2n), wsub/wsubp (r, a, b all 2n),
    addnr (r, a, b n). Memory operands describe exactly what is read and written."""
    nt = {'mulwide': n + 1, 'redc': n + 1, 'wsub': 1, 'wsubp': 3, 'addnr': 1}[kind]
    regs = ['t%d' % k for k in range(nt)]
    if kind in ('mulwide', 'redc'):
        regs += ['lo', 'hi']
    rn = {'mulwide': 2 * n, 'redc': n, 'wsub': 2 * n, 'wsubp': 2 * n, 'addnr': n}[kind]
    an = {'mulwide': n, 'redc': 2 * n, 'wsub': 2 * n, 'wsubp': 2 * n, 'addnr': n}[kind]
    has_b = kind != 'redc'
    lines = ['#define %s(r_, a_%s) do { \\' % (name, ', b_' if has_b else '')]
    lines.append('    uint64_t %s; \\' % ', '.join(regs))
    volatile = kind in ('redc', 'mulwide') and n == 6
    lines.append('    __asm__%s( \\' % (' volatile' if volatile else ''))
    for ins in body:
        lines.append('        "%s\\n\\t" \\' % ins)
    outs = ([] if volatile else ['"=m"(*(uint64_t(*)[%d])(r_))' % rn]) + ['[%s] "=&r"(%s)' % (x, x) for x in regs]
    lines.append('        : %s \\' % ', '.join(outs))
    ins = ['[r] "r"(r_)', '[a] "r"(a_)']
    if not volatile:
        ins.append('"m"(*(const uint64_t(*)[%d])(a_))' % an)
    if has_b:
        ins.append('[b] "r"(b_)')
        if not volatile:
            ins.append('"m"(*(const uint64_t(*)[%d])(b_))' % (n if kind in ('mulwide', 'addnr') else 2 * n))
    if kind in ('redc', 'wsubp'):
        ins += ['[p%d] "m"(FP[%d])' % (j, j) for j in range(n)]
    if kind == 'redc':
        ins.append('[inv] "m"(FI)')
    lines.append('        : %s \\' % ', '.join(ins))
    clob = ['"cc"']
    if kind in ('mulwide', 'redc'):
        clob.insert(0, '"rdx"')
    if volatile:
        clob.append('"memory"')
    lines.append('        : %s); \\' % ', '.join(clob))
    lines.append('} while (0)')
    return lines


def c_macro(name, n, body, outs, kind):
    """a statement macro NAME(r, a, b): operands name the template's FP (modulus limbs) and
    FI (-1/p mod 2^64) static constants, so they are RIP-relative memory operands."""
    lines = []
    if kind == 'mul':
        regs = ['t%d' % k for k in range(n + 1)] + ['lo', 'hi']
        args = '(r_, a_, b_)'
    elif kind == 'add':
        ns = 4 if (n == 4 and name.startswith('ZP_FF_ASM_ADD')) else 2
        regs = ['t%d' % k for k in range(n)] + ['s%d' % k for k in range(ns)]
        args = '(r_, a_, b_)'
    else:
        regs = ['u%d' % k for k in range(2 * n)] + ['lo', 'hi']
        args = '(r_, a_)'
    lines.append('#define %s%s do { \\' % (name, args))
    lines.append('    uint64_t %s; \\' % ', '.join(regs))
    lines.append('    (void)0; \\')
    if kind == 'sqr':
        lines.append('    uintptr_t ap_ = (uintptr_t)(a_); \\')
    use_mem = kind == 'mul' and n == 6
    lines.append('    __asm__%s( \\' % (' volatile' if use_mem else ''))
    stores = []
    for k, o in enumerate(outs):
        stores.append('movq %s, %d(%%[r])' % (o, 8 * k))
    body = body + stores
    for ins in body:
        lines.append('        "%s\\n\\t" \\' % ins)
    # 6-limb mul needs 13 registers: its memory operands would cost more (clang does not share
    # the address registers), so it declares a "memory" clobber instead.
    use_mem = kind == 'mul' and n == 6
    outs_c = ([] if use_mem else ['"=m"(*(uint64_t(*)[%d])(r_))' % n]) + ['[%s] "=&r"(%s)' % (x, x) for x in regs]
    if kind == 'sqr':
        outs_c.append('[a] "+&r"(ap_)')
    lines.append('        : %s \\' % ', '.join(outs_c))
    ins = ['[r] "r"(r_)'] + ([] if kind == 'sqr' else ['[a] "r"(a_)'])
    if not use_mem:
        ins.append('"m"(*(const uint64_t(*)[%d])(a_))' % n)
    if kind in ('mul', 'add'):
        ins += ['[b] "r"(b_)'] + ([] if use_mem else ['"m"(*(const uint64_t(*)[%d])(b_))' % n])
    ins += ['[p%d] "m"(FP[%d])' % (j, j) for j in range(n)]
    if kind != 'add':
        ins += ['[inv] "m"(FI)']
    lines.append('        : %s \\' % ', '.join(ins))
    lines.append('        : %s); \\' % ('"cc"' if kind == 'add' else '"rdx", "cc", "memory"' if use_mem else '"rdx", "cc"'))
    lines.append('} while (0)')
    return lines


out = ['/* ff_asm.h - GENERATED by gen_asm.py; do not edit. x86-64 BMI2+ADX (mulx/adcx/adox)',
       ' * Montgomery multiplication (4 and 6 limbs), squaring (4 limbs), add and sub, as GCC',
       ' * inline assembly; results fully reduced. Included by ff_arith.h (template) when',
       ' * ZP_FF_ASM is set: the macros name the template\'s FP (modulus) and FI (-1/p mod 2^64);',
       ' * the part below the guard is instantiated per field (FF, FF_N).',
       ' * Tests: tests/test_ff.c (against the C _ref functions). */',
       '#ifndef ZP_FF_ASM_H', '#define ZP_FF_ASM_H']
for n in (4, 6):
    body, outs = mul_asm(n)
    out += c_macro('ZP_FF_ASM_MUL%d' % n, n, body, outs, 'mul')
for n in (4, 6):
    body, outs = add_asm(n)
    out += c_macro('ZP_FF_ASM_ADD%d' % n, n, body, outs, 'add')
    body, outs = sub_asm(n)
    out += c_macro('ZP_FF_ASM_SUB%d' % n, n, body, outs, 'add')
body, outs = sqr_asm(4)
out += c_macro('ZP_FF_ASM_SQR4', 4, body, outs, 'sqr')
for n in (4, 6):
    out += c_wide('ZP_FF_ASM_MULWIDE%d' % n, n, mulwide_asm(n)[0], 'mulwide')
    out += c_wide('ZP_FF_ASM_REDC%d' % n, n, redc_asm(n)[0], 'redc')
    out += c_wide('ZP_FF_ASM_WSUB%d' % n, n, wsub_asm(n, False)[0], 'wsub')
    out += c_wide('ZP_FF_ASM_WSUBP%d' % n, n, wsub_asm(n, True)[0], 'wsubp')
    out += c_wide('ZP_FF_ASM_ADDNR%d' % n, n, addnr_asm(n)[0], 'addnr')
out += ['#endif', '',
        '#define FI FF_XCAT3(zp_ffinv_, FF, _)',
        'static const uint64_t FI = FF_XCAT3(FFC_, FF, _INV);',
        'static inline void FF_XCAT3(zp_, FF, _mul_inl)(FT *r, const FT *a, const FT *b)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_MUL, FF_N, )(r->l, a->l, b->l);',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _sqr_inl)(FT *r, const FT *a)',
        '{',
        '#if FF_N == 4',
        '    ZP_FF_ASM_SQR4(r->l, a->l);',
        '#else',
        '    FF_XCAT3(ZP_FF_ASM_MUL, FF_N, )(r->l, a->l, a->l);',
        '#endif',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _add_inl)(FT *r, const FT *a, const FT *b)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_ADD, FF_N, )(r->l, a->l, b->l);',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _sub_inl)(FT *r, const FT *a, const FT *b)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_SUB, FF_N, )(r->l, a->l, b->l);',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _mul_wide_inl)(uint64_t *r, const FT *a, const FT *b)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_MULWIDE, FF_N, )(r, a->l, b->l);',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _redc_inl)(FT *r, const uint64_t *u)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_REDC, FF_N, )(r->l, u);',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _wsub_inl)(uint64_t *r, const uint64_t *a, const uint64_t *b)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_WSUB, FF_N, )(r, a, b);',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _wsubp_inl)(uint64_t *r, const uint64_t *a, const uint64_t *b)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_WSUBP, FF_N, )(r, a, b);',
        '}',
        'static inline void FF_XCAT3(zp_, FF, _add_nr_inl)(FT *r, const FT *a, const FT *b)',
        '{',
        '    FF_XCAT3(ZP_FF_ASM_ADDNR, FF_N, )(r->l, a->l, b->l);',
        '}',
        '#undef FI']
print('\n'.join(out))
