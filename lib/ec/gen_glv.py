#!/usr/bin/env python3
"""gen_glv.py - writes lib/ec/ec_glv_consts.h: the GLV endomorphism constants of G1 and G2 of
BN254 and BLS12-381. Run from the repository root: python3 lib/ec/gen_glv.py > lib/ec/ec_glv_consts.h

Where the constants come from (plain Python big integers, nothing else):
  * r (group order) and p (base field) are the moduli of lib/ff/gen_consts.py.
  * lambda: a primitive cube root of unity mod r (root of x^2 + x + 1 mod r); beta: one mod p.
    On y^2 = x^3 + b, phi(x, y) = (beta x, y) is an automorphism of order 3, so on the
    cyclic group of order r it is multiplication by lambda or by lambda^2. We fix lambda and
    pick, per group, the beta (beta or beta^2) with phi(G) == lambda G, checked here on the
    generators read from lib/ec/ec.c. On G2 (the twist over Fq2) the same map with beta in Fq
    is an endomorphism too; it gets its own beta.
  * lattice basis: the short vectors (a1, b1), (a2, b2) with a + b lambda = 0 mod r, from the
    extended Euclidean algorithm on (r, lambda) (Guide to ECC, alg. 3.74).
  * decomposition of k (0 <= k < r), d = a1 b2 - a2 b1 = +-r: c1 = round(b2 k / d),
    c2 = round(-b1 k / d) (Babai rounding: (k, 0) in the basis),
    k1 = k - c1 a1 - c2 a2, k2 = -c1 b1 - c2 b2; then k1 + k2 lambda = k mod r.
    |c_i| is computed as (k g_i + 2^(S-1)) >> S with g_i = round(|b2 or b1| 2^S / r), S = SHIFT
    = 320 (g_i in 5 limbs: the fixed point adds at most k 2^-(S+1) < 2^-66 to Babai's 1/2); the
    signs of c1 and c2 are folded into the four products' constants M_ij, stored mod 2^256, so that
    k1 = k + c1 M11 + c2 M12 and k2 = c1 M21 + c2 M22 (mod 2^256, read as signed).
  * BITS: the bound on |k1|, |k2|: k_i = sum_j (c_j exact - c_j) B_ji with |c_j exact - c_j|
    <= 1/2 + 2^-66, so |k_i| <= (1/2 + 2^-66) sum_j |B_ji| (bound(), shared with gen_gls.py;
    checked below on random and edge scalars, and in tests/test_ec.c).
"""
import random
import re
import sys
from fractions import Fraction

SHIFT = 320  # fixed point of the rounding constants g (5 limbs)

CURVES = {
    'bn254': dict(r=21888242871839275222246405745257275088548364400416034343698204186575808495617,
                  p=21888242871839275222246405745257275088696311157297823662689037894645226208583,
                  nl=4, b1=3, gen1='bn_gen1', gen2='bn_gen2', b2=None, xi=(9, 1)),
    'bls12_381': dict(r=0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001,
                      p=0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab,
                      nl=6, b1=4, gen1='bls_gen1', gen2='bls_gen2', b2=(4, 4), xi=None),
}


def limbs(x, n):
    assert 0 <= x < 1 << (64 * n)
    return '{{' + ', '.join('0x%016xULL' % ((x >> (64 * i)) & (2**64 - 1)) for i in range(n)) + '}}'


def read_gens(src):
    """affine generators from ec.c: name -> list of Montgomery-form integers (x[, x1], y[, y1])"""
    out = {}
    for name in ('bn_gen1', 'bn_gen2', 'bls_gen1', 'bls_gen2'):
        m = re.search(r'\b' + name + r' = \{(.*?)\};', src, re.S)
        vals = []
        for grp in re.findall(r'L[46]\((.*?)\)', m.group(1), re.S):
            ls = [int(t.replace('ULL', ''), 16) for t in grp.replace('\n', ' ').split(',')]
            vals.append(sum(v << (64 * i) for i, v in enumerate(ls)))
        out[name] = vals
    return out


class F2:
    """Fq2 = Fq[u]/(u^2 + 1)"""
    def __init__(s, p, a, b=0):
        s.p, s.a, s.b = p, a % p, b % p

    def __add__(s, o): return F2(s.p, s.a + o.a, s.b + o.b)
    def __sub__(s, o): return F2(s.p, s.a - o.a, s.b - o.b)
    def __mul__(s, o): return F2(s.p, s.a * o.a - s.b * o.b, s.a * o.b + s.b * o.a)
    def __eq__(s, o): return s.a == o.a and s.b == o.b

    def inv(s):
        d = pow(s.a * s.a + s.b * s.b, -1, s.p)
        return F2(s.p, s.a * d, -s.b * d)


def ec_mul(P, k, F):
    """affine double-and-add on y^2 = x^3 + b (a = 0); None = infinity. F: field ops
    (sub, mul, inv, eq, c(int) -> element)"""
    sub, mul, inv, eq, c = F

    def add(A, B):
        if A is None: return B
        if B is None: return A
        if eq(A[0], B[0]):
            if not eq(A[1], B[1]) or eq(A[1], c(0)):
                return None
            l = mul(mul(c(3), mul(A[0], A[0])), inv(mul(c(2), A[1])))
        else:
            l = mul(sub(B[1], A[1]), inv(sub(B[0], A[0])))
        x = sub(sub(mul(l, l), A[0]), B[0])
        return (x, sub(mul(l, sub(A[0], x)), A[1]))
    R = None
    for bit in bin(k)[2:]:
        R = add(R, R)
        if bit == '1': R = add(R, P)
    return R


def cube_roots(m):
    """the two primitive cube roots of unity mod prime m (m = 1 mod 3)"""
    assert m % 3 == 1
    for g in range(2, 1000):
        w = pow(g, (m - 1) // 3, m)
        if w != 1:
            return sorted([w, w * w % m])
    raise AssertionError


def basis(r, lam):
    """short lattice basis of {(a, b): a + b lam = 0 mod r} (extended Euclid)"""
    r0, r1, t0, t1 = r, lam, 0, 1
    rs, ts = [r0, r1], [t0, t1]
    while r1:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        t0, t1 = t1, t0 - q * t1
        rs.append(r1)
        ts.append(t1)
    import math
    s = math.isqrt(r)
    l = max(i for i in range(len(rs)) if rs[i] >= s)
    v1 = (rs[l + 1], -ts[l + 1])
    c1, c2 = (rs[l], -ts[l]), (rs[l + 2], -ts[l + 2])
    v2 = min(c1, c2, key=lambda v: v[0] ** 2 + v[1] ** 2)
    for a, b in (v1, v2):
        assert (a + b * lam) % r == 0
    return v1, v2


def bound(colsums, kmax):
    """bits such that every part is < 2^bits: |k_i| <= (1/2 + kmax 2^-(SHIFT+1)) colsum_i"""
    e = Fraction(1, 2) + Fraction(kmax, 1 << (SHIFT + 1))
    return max(int(e * s).bit_length() for s in colsums)


def glimbs(x):
    """a rounding constant as 5 little-endian limbs (uint64_t[5] initializer)"""
    assert 0 <= x < 1 << SHIFT
    return '{' + ', '.join('0x%016xULL' % ((x >> (64 * i)) & (2**64 - 1)) for i in range(5)) + '}'


def split(k, C):
    """the C algorithm, in Python (same fixed-point steps)"""
    M = 1 << 256
    c1 = (k * C['g1'] + (1 << (SHIFT - 1))) >> SHIFT
    c2 = (k * C['g2'] + (1 << (SHIFT - 1))) >> SHIFT
    k1 = (k + c1 * C['m11'] + c2 * C['m12']) % M
    k2 = (c1 * C['m21'] + c2 * C['m22']) % M
    if k1 >= M // 2: k1 -= M
    if k2 >= M // 2: k2 -= M
    return k1, k2


def main():
    src = open('lib/ec/ec.c').read()
    gens = read_gens(src)
    out = ['/* ec_glv_consts.h - GENERATED by lib/ec/gen_glv.py (see there for the derivation);',
           ' * do not edit. Limbs little-endian; beta in Montgomery form, the rest standard. */',
           '#ifndef ZP_EC_GLV_CONSTS_H', '#define ZP_EC_GLV_CONSTS_H']
    for name, C in CURVES.items():
        r, p, nl = C['r'], C['p'], C['nl']
        R = 1 << (64 * nl)
        Ri = pow(R, -1, p)
        lam = cube_roots(r)[0]
        betas = cube_roots(p)
        # G1
        g1 = [v * Ri % p for v in gens[C['gen1']]]
        G = (g1[0], g1[1])
        assert (G[1] ** 2 - G[0] ** 3 - C['b1']) % p == 0
        lG = ec_mul(G, lam, (lambda a, b: (a - b) % p, lambda a, b: a * b % p,
                             lambda a: pow(a, -1, p), lambda a, b: a == b, lambda v: v % p))
        beta1 = [b for b in betas if (b * G[0] % p, G[1]) == lG]
        assert len(beta1) == 1, 'G1 beta'
        # G2
        g2 = [v * Ri % p for v in gens[C['gen2']]]
        Q = (F2(p, g2[0], g2[1]), F2(p, g2[2], g2[3]))
        lQ = ec_mul(Q, lam, (lambda a, b: a - b, lambda a, b: a * b, lambda a: a.inv(),
                             lambda a, b: a == b, lambda v: F2(p, v)))
        beta2 = [b for b in betas if lQ[0] == Q[0] * F2(p, b) and lQ[1] == Q[1]]
        assert len(beta2) == 1, 'G2 beta'
        (a1, b1), (a2, b2) = basis(r, lam)
        det = a1 * b2 - a2 * b1
        assert det in (r, -r)
        M = 1 << 256
        s1 = 1 if b2 * det >= 0 else -1   # c1 = round(b2 k / det) = s1 round(|b2| k / r)
        s2 = 1 if -b1 * det >= 0 else -1  # c2 = round(-b1 k / det) = s2 round(|b1| k / r)
        S = 1 << SHIFT
        C.update(g1=(abs(b2) * S + r // 2) // r, g2=(abs(b1) * S + r // 2) // r,
                 m11=(-s1 * a1) % M, m12=(-s2 * a2) % M, m21=(-s1 * b1) % M, m22=(-s2 * b2) % M)
        # bound: check many scalars (random, edges, near multiples of the basis)
        rnd = random.Random(12)
        ks = [0, 1, 2, r - 1, r - 2, lam, lam + 1, lam - 1, r // 2, (r + 1) // 2]
        ks += [rnd.randrange(r) for _ in range(200000)]
        ks += [(i * abs(a1) + j * abs(a2)) % r for i in range(-50, 50) for j in range(-50, 50)]
        ks += [(i * abs(b1) + j * abs(b2)) % r for i in range(-50, 50) for j in range(-50, 50)]
        worst = 0
        for k in ks:
            k1, k2 = split(k, C)
            assert (k1 + k2 * lam - k) % r == 0
            worst = max(worst, abs(k1), abs(k2))
        # analytic: |k1| <= (|a1| + |a2|) (1/2 + e), |k2| likewise; e covers the fixed point
        an = max(abs(a1) + abs(a2), abs(b1) + abs(b2))
        bits = bound([abs(a1) + abs(a2), abs(b1) + abs(b2)], r - 1)
        assert worst < 1 << bits
        assert C['g1'] < 1 << SHIFT and C['g2'] < 1 << SHIFT
        U = name.upper()
        out.append('/* %s: lambda^2 + lambda + 1 = 0 mod r; basis (a1, b1) = (%d, %d),' % (name, a1, b1))
        out.append(' * (a2, b2) = (%d, %d); |k1|, |k2| <= (1/2 + 2^-66) (|a1|+|a2| or |b1|+|b2|) < 2^%d' % (a2, b2, bits))
        out.append(' * (largest seen over %d scalars: %d bits) */' % (len(ks), worst.bit_length()))
        out.append('#define GLV_%s_BITS %d' % (U, bits))
        out.append('#define GLV_%s_LAMBDA %s' % (U, limbs(lam, 4)))
        out.append('#define GLV_%s_BETA_G1 %s /* beta = %d */' % (U, limbs(beta1[0] * R % p, nl), beta1[0]))
        out.append('#define GLV_%s_BETA_G2 %s /* beta = %d */' % (U, limbs(beta2[0] * R % p, nl), beta2[0]))
        for key in ('g1', 'g2'):
            out.append('#define GLV_%s_%s %s' % (U, key.upper(), glimbs(C[key])))
        for key in ('m11', 'm12', 'm21', 'm22'):
            out.append('#define GLV_%s_%s %s' % (U, key.upper(), limbs(C[key], 4)))
    out.append('#endif')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
