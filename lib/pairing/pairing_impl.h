/* pairing_impl.h - TEMPLATE (no include guard): the optimal ate pairing of one curve.
 * Included by pairing.c once per curve with
 *   PC          curve suffix (bn254, bls12_381)
 *   PAIR_DTYPE  1: D-type twist E': y^2 = x^3 + b/xi, untwist (x,y) -> (x w^2, y w^3) (BN254)
 *               0: M-type twist E': y^2 = x^3 + b xi, untwist (x,y) -> (x w^-2, y w^-3) (BLS12-381)
 *   PAIR_LOOP   signed digits of the loop parameter, most significant first (top digit 1)
 *   PAIR_BN     1: add the two Frobenius lines of the BN optimal ate pairing
 *   PAIR_XNEG   1: the loop parameter is -|x| (conjugate f after the loop)
 *   PAIR_XABS   |x| (u64)
 * Fq12 = Fq6[w]/(w^2 - v), Fq6 = Fq2[v]/(v^3 - xi) (ff.h), so w^2 = v, w^3 = v w, w^6 = xi.
 *
 * Miller loop: T in Jacobian coordinates on the twist, Q affine. A line through T (slope N/D on
 * the twist) evaluated at P = (xP, yP) is, up to a factor in Fq2 (killed by the final
 * exponentiation), A yP + B xP + C with A = D, B = -N, C = N xT - D yT; placed in Fq12 as
 *   D-type: A yP + (B xP) w + C w^3          -> c0 = (A yP, 0, 0), c1 = (B xP, C, 0)
 *   M-type: (times w^3) C + (B xP) w^2 + (A yP) w^3 -> c0 = (C, B xP, 0), c1 = (0, A yP, 0)
 * (w^3 lies in Fq4, a proper subfield, so it is killed too.) Pairs share the squarings of f.
 * Inputs are assumed to lie in G1 x G2 (the callers check subgroup membership of untrusted
 * points); for other points the result is unspecified but the code never faults.
 * Tests: tests/test_pairing.c */

#define QT PAIR_XCAT3(zp_fq_, PC, _t)
#define Q(x) PAIR_XCAT3(zp_fq_, PC, _##x)
#define E2T PAIR_XCAT3(zp_fq2_, PC, _t)
#define E6T PAIR_XCAT3(zp_fq6_, PC, _t)
#define E12T PAIR_XCAT3(zp_fq12_, PC, _t)
#define E2(x) PAIR_XCAT3(zp_fq2_, PC, _##x)
#define E6(x) PAIR_XCAT3(zp_fq6_, PC, _##x)
#define E12(x) PAIR_XCAT3(zp_fq12_, PC, _##x)
#define G1A PAIR_XCAT3(zp_g1a_, PC, _t)
#define G2A PAIR_XCAT3(zp_g2a_, PC, _t)
#define PN(x) PAIR_XCAT4(zp_, x, _, PC)
#define SN(x) PAIR_XCAT3(pair_, PC, _##x)

typedef struct { E2T x, y, z; } SN(tpt_t);        /* Jacobian point on the twist */
typedef struct { E2T a, b, c; } SN(line_t);       /* A yP, B xP, C (already evaluated at P) */

/* T = 2T; line tangent at the old T, evaluated at P */
static void SN(dbl_step)(SN(tpt_t) *T, SN(line_t) *l, const QT *xP, const QT *yP)
{
    E2T A, B, C, D, E, F, ZZ, t;
    E2(sqr)(&A, &T->x);                 /* A = X^2 */
    E2(sqr)(&B, &T->y);                 /* B = Y^2 */
    E2(sqr)(&C, &B);                    /* C = B^2 */
    E2(add)(&D, &T->x, &B);             /* D = 2((X+B)^2 - A - C) */
    E2(sqr)(&D, &D);
    E2(sub)(&D, &D, &A);
    E2(sub)(&D, &D, &C);
    E2(dbl)(&D, &D);
    E2(dbl)(&E, &A);                    /* E = 3A */
    E2(add)(&E, &E, &A);
    E2(sqr)(&F, &E);                    /* F = E^2 */
    E2(sqr)(&ZZ, &T->z);
    /* line: A' = 2YZ * Z^2, B' = -3X^2 Z^2, C' = 3X^3 - 2Y^2 (uses the old X, Y, Z) */
    E2(mul)(&l->c, &E, &T->x);
    E2(dbl)(&t, &B);
    E2(sub)(&l->c, &l->c, &t);
    E2(mul)(&t, &E, &ZZ);
    E2(mul_fq)(&t, &t, xP);
    E2(neg)(&l->b, &t);
    E2(mul)(&T->z, &T->y, &T->z);       /* Z3 = 2YZ */
    E2(dbl)(&T->z, &T->z);
    E2(mul)(&t, &T->z, &ZZ);
    E2(mul_fq)(&l->a, &t, yP);
    E2(dbl)(&t, &D);                    /* X3 = F - 2D */
    E2(sub)(&T->x, &F, &t);
    E2(sub)(&t, &D, &T->x);             /* Y3 = E(D - X3) - 8C */
    E2(mul)(&t, &E, &t);
    E2(dbl)(&C, &C);
    E2(dbl)(&C, &C);
    E2(dbl)(&C, &C);
    E2(sub)(&T->y, &t, &C);
}

/* T = T + Q (Q affine, T != +-Q); line through T and Q, evaluated at P */
static void SN(add_step)(SN(tpt_t) *T, SN(line_t) *l, const E2T *qx, const E2T *qy, const QT *xP, const QT *yP)
{
    E2T ZZ, U2, S2, H, HH, I, J, r, V, t;
    E2(sqr)(&ZZ, &T->z);
    E2(mul)(&U2, qx, &ZZ);
    E2(mul)(&S2, qy, &T->z);
    E2(mul)(&S2, &S2, &ZZ);
    E2(sub)(&H, &U2, &T->x);            /* H = U2 - X */
    E2(sqr)(&HH, &H);
    E2(dbl)(&I, &HH);                   /* I = 4 HH */
    E2(dbl)(&I, &I);
    E2(mul)(&J, &H, &I);
    E2(sub)(&r, &S2, &T->y);            /* r = 2(S2 - Y) */
    E2(dbl)(&r, &r);
    E2(mul)(&V, &T->x, &I);
    E2(add)(&t, &T->z, &H);             /* Z3 = (Z+H)^2 - ZZ - HH = 2ZH */
    E2(sqr)(&t, &t);
    E2(sub)(&t, &t, &ZZ);
    E2(sub)(&T->z, &t, &HH);
    E2(sqr)(&T->x, &r);                 /* X3 = r^2 - J - 2V */
    E2(sub)(&T->x, &T->x, &J);
    E2(dbl)(&t, &V);
    E2(sub)(&T->x, &T->x, &t);
    E2(mul)(&J, &J, &T->y);             /* Y3 = r(V - X3) - 2 Y J */
    E2(dbl)(&J, &J);
    E2(sub)(&t, &V, &T->x);
    E2(mul)(&t, &r, &t);
    E2(sub)(&T->y, &t, &J);
    /* line: A' = Z3, B' = -r, C' = r x2 - Z3 y2 */
    E2(mul_fq)(&l->a, &T->z, yP);
    E2(mul_fq)(&t, &r, xP);
    E2(neg)(&l->b, &t);
    E2(mul)(&l->c, &r, qx);
    E2(mul)(&t, &T->z, qy);
    E2(sub)(&l->c, &l->c, &t);
}

/* (a0 + a1 v) * (c0 + c1 v + c2 v^2) in Fq6, schoolbook on the two nonzero terms */
static void SN(fq6_mul_01)(E6T *r, const E6T *c, const E2T *a0, const E2T *a1)
{
    E2T t0, t1, t2, u;
    E2(mul)(&t0, a0, &c->c0);            /* r0 = a0 c0 + xi a1 c2 */
    E2(mul)(&u, a1, &c->c2);
    E2(mul_xi)(&u, &u);
    E2(add)(&t0, &t0, &u);
    E2(mul)(&t1, a0, &c->c1);            /* r1 = a0 c1 + a1 c0 */
    E2(mul)(&u, a1, &c->c0);
    E2(add)(&t1, &t1, &u);
    E2(mul)(&t2, a0, &c->c2);            /* r2 = a0 c2 + a1 c1 */
    E2(mul)(&u, a1, &c->c1);
    E2(add)(&t2, &t2, &u);
    r->c0 = t0;
    r->c1 = t1;
    r->c2 = t2;
}

#if !PAIR_DTYPE
/* a1 v * (c0 + c1 v + c2 v^2) = xi a1 c2 + a1 c0 v + a1 c1 v^2 */
static void SN(fq6_mul_1)(E6T *r, const E6T *c, const E2T *a1)
{
    E2T t0, t1, t2;
    E2(mul)(&t0, a1, &c->c2);
    E2(mul_xi)(&t0, &t0);
    E2(mul)(&t1, a1, &c->c0);
    E2(mul)(&t2, a1, &c->c1);
    r->c0 = t0;
    r->c1 = t1;
    r->c2 = t2;
}

#else
static void SN(fq6_mul_0)(E6T *r, const E6T *c, const E2T *a0)
{
    E2(mul)(&r->c0, &c->c0, a0);
    E2(mul)(&r->c1, &c->c1, a0);
    E2(mul)(&r->c2, &c->c2, a0);
}
#endif

/* f *= line (sparse: 3 nonzero Fq2 coefficients of 6), Karatsuba over Fq6[w] */
static void SN(mul_line)(E12T *f, const SN(line_t) *l)
{
    E6T t0, t1, s;
#if PAIR_DTYPE
    /* l0 = (a, 0, 0), l1 = (b, c, 0) */
    E2T s0;
    SN(fq6_mul_0)(&t0, &f->c0, &l->a);
    SN(fq6_mul_01)(&t1, &f->c1, &l->b, &l->c);
    E6(add)(&s, &f->c0, &f->c1);
    E2(add)(&s0, &l->a, &l->b);
    SN(fq6_mul_01)(&s, &s, &s0, &l->c);
#else
    /* l0 = (c, b, 0), l1 = (0, a, 0) */
    E2T s1;
    SN(fq6_mul_01)(&t0, &f->c0, &l->c, &l->b);
    SN(fq6_mul_1)(&t1, &f->c1, &l->a);
    E6(add)(&s, &f->c0, &f->c1);
    E2(add)(&s1, &l->b, &l->a);
    SN(fq6_mul_01)(&s, &s, &l->c, &s1);
#endif
    E6(sub)(&s, &s, &t0);
    E6(sub)(&f->c1, &s, &t1);
    E6(mul_v)(&t1, &t1);
    E6(add)(&f->c0, &t0, &t1);
}

#if PAIR_BN
/* pi(Q) on the D-type twist: untwist to E(Fq12), apply the p-power Frobenius, twist back.
 * x w^2 = x v lives in c0.c1, y w^3 = y v w in c1.c1 (the Frobenius keeps those slots). */
static void SN(frob_twist)(E2T *rx, E2T *ry, const E2T *x, const E2T *y)
{
    E12T X, Y;
    memset(&X, 0, sizeof X);
    memset(&Y, 0, sizeof Y);
    X.c0.c1 = *x;
    Y.c1.c1 = *y;
    E12(frobenius)(&X, &X, 1);
    E12(frobenius)(&Y, &Y, 1);
    *rx = X.c0.c1;
    *ry = Y.c1.c1;
}
#endif

enum { SN(BATCH) = 8 };  /* pairs per shared loop (stack only, no allocation) */

/* f = prod over the batch (n <= BATCH, all finite) of the Miller functions */
static void SN(miller_batch)(E12T *f, const G1A *p, const G2A *q, size_t n)
{
    SN(tpt_t) T[SN(BATCH)];
    E2T nqy[SN(BATCH)];
    SN(line_t) l;
    for (size_t i = 0; i < n; i++) {
        T[i].x = q[i].x;
        T[i].y = q[i].y;
        memset(&T[i].z, 0, sizeof T[i].z);
        T[i].z.c0 = Q(one);
        E2(neg)(&nqy[i], &q[i].y);
    }
    E12(one)(f);
    static const signed char loop[] = PAIR_LOOP;
    for (size_t k = 1; k < sizeof loop; k++) {
        if (k > 1) E12(sqr)(f, f);
        for (size_t i = 0; i < n; i++) {
            SN(dbl_step)(&T[i], &l, &p[i].x, &p[i].y);
            SN(mul_line)(f, &l);
        }
        if (loop[k] == 0) continue;
        for (size_t i = 0; i < n; i++) {
            SN(add_step)(&T[i], &l, &q[i].x, loop[k] > 0 ? &q[i].y : &nqy[i], &p[i].x, &p[i].y);
            SN(mul_line)(f, &l);
        }
    }
#if PAIR_BN
    /* f *= l_{T, pi(Q)}(P) * l_{T + pi(Q), -pi^2(Q)}(P) */
    for (size_t i = 0; i < n; i++) {
        E2T x1, y1, x2, y2;
        SN(frob_twist)(&x1, &y1, &q[i].x, &q[i].y);
        SN(frob_twist)(&x2, &y2, &x1, &y1);
        E2(neg)(&y2, &y2);
        SN(add_step)(&T[i], &l, &x1, &y1, &p[i].x, &p[i].y);
        SN(mul_line)(f, &l);
        SN(add_step)(&T[i], &l, &x2, &y2, &p[i].x, &p[i].y);
        SN(mul_line)(f, &l);
    }
#endif
#if PAIR_XNEG
    E12(conj)(f, f);
#endif
}

void PN(miller_loop)(E12T *r, const G1A *p, const G2A *q, size_t n)
{
    G1A bp[SN(BATCH)];
    G2A bq[SN(BATCH)];
    size_t m = 0;
    E12T acc, f;
    E12(one)(&acc);
    for (size_t i = 0; i < n; i++) {
        if (PAIR_XCAT3(zp_g1a_, PC, _is_inf)(&p[i]) || PAIR_XCAT3(zp_g2a_, PC, _is_inf)(&q[i])) continue;
        bp[m] = p[i];
        bq[m] = q[i];
        if (++m == SN(BATCH)) {
            SN(miller_batch)(&f, bp, bq, m);
            E12(mul)(&acc, &acc, &f);
            m = 0;
        }
    }
    if (m) {
        SN(miller_batch)(&f, bp, bq, m);
        E12(mul)(&acc, &acc, &f);
    }
    *r = acc;
}

/* Squaring in the cyclotomic subgroup (Granger-Scott 2010). Write Fq12 = Fq4[t]/(t^3 - s) with
 * t = w, s = w^3, Fq4 = Fq2[s]/(s^2 - xi); f = A0 + A1 t + A2 t^2 with
 * A0 = c0.c0 + c1.c1 s, A1 = c1.c0 + c0.c2 s, A2 = c0.c1 + c1.c2 s. For f in the cyclotomic
 * subgroup (f^(q^4 - q^2 + 1) = 1, true after the easy part):
 *   A0' = 3 A0^2 - 2 conj(A0),  A1' = 3 s A2^2 + 2 conj(A1),
 * A2' = 3 A1^2 - 2 conj(A2), conj(x + y s) = x - y s. 9 Fq2 squarings instead of 12 Fq2 products. */
static void SN(fq4_sqr)(E2T *rx, E2T *ry, const E2T *x, const E2T *y)
{
    E2T x2, y2, t;
    E2(sqr)(&x2, x);
    E2(sqr)(&y2, y);
    E2(add)(&t, x, y);                  /* ry = (x+y)^2 - x^2 - y^2 = 2xy */
    E2(sqr)(&t, &t);
    E2(sub)(&t, &t, &x2);
    E2(sub)(ry, &t, &y2);
    E2(mul_xi)(&y2, &y2);               /* rx = x^2 + xi y^2 */
    E2(add)(rx, &x2, &y2);
}

/* r = 3 a - 2 b (sign = -1) or 3 a + 2 b (sign = +1) */
static void SN(gs_comb)(E2T *r, const E2T *a, const E2T *b, int sign)
{
    E2T t;
    if (sign < 0) E2(sub)(&t, a, b);
    else E2(add)(&t, a, b);
    E2(dbl)(&t, &t);
    E2(add)(r, &t, a);
}

static void SN(cyc_sqr)(E12T *r, const E12T *f)
{
    E2T x0, y0, x1, y1, x2, y2;
    SN(fq4_sqr)(&x0, &y0, &f->c0.c0, &f->c1.c1);    /* A0^2 */
    SN(fq4_sqr)(&x1, &y1, &f->c1.c0, &f->c0.c2);    /* A1^2 */
    SN(fq4_sqr)(&x2, &y2, &f->c0.c1, &f->c1.c2);    /* A2^2 */
    E12T o;
    /* A0' = 3 A0^2 - 2 conj(A0) */
    SN(gs_comb)(&o.c0.c0, &x0, &f->c0.c0, -1);
    SN(gs_comb)(&o.c1.c1, &y0, &f->c1.c1, +1);
    /* A1' = 3 s A2^2 + 2 conj(A1); s (x + y s) = xi y + x s */
    E2(mul_xi)(&y2, &y2);
    SN(gs_comb)(&o.c1.c0, &y2, &f->c1.c0, +1);
    SN(gs_comb)(&o.c0.c2, &x2, &f->c0.c2, -1);
    /* A2' = 3 A1^2 - 2 conj(A2) */
    SN(gs_comb)(&o.c0.c1, &x1, &f->c0.c1, -1);
    SN(gs_comb)(&o.c1.c2, &y1, &f->c1.c2, +1);
    *r = o;
}

/* a^x for the curve parameter x; a in the cyclotomic subgroup (inverse = conjugate) */
static void SN(pow_x)(E12T *r, const E12T *a)
{
    const uint64_t ax = PAIR_XABS;
    E12T acc = *a;
    for (int bit = 62 - __builtin_clzll(ax); bit >= 0; bit--) {
        SN(cyc_sqr)(&acc, &acc);
        if ((ax >> bit) & 1) E12(mul)(&acc, &acc, a);
    }
#if PAIR_XNEG
    E12(conj)(&acc, &acc);
#endif
    *r = acc;
}

/* The hard part computes m^(lambda (p^4 - p^2 + 1)/r), the exponent snarkjs/ffjavascript use,
 * so that values equal theirs (e.g. vk_alphabeta_12). lambda is coprime to r, so this is the
 * textbook pairing raised to a fixed power: still bilinear and non-degenerate.
 *   BN254:     lambda = 2x(6x^2 + 3x + 1); lambda (p^4 - p^2 + 1)/r = l0 + l1 p + l2 p^2 + l3 p^3
 *              with l0 = 12x^3 + 12x^2 + 6x + 1, l1 = 12x^3 + 6x^2 + 4x, l2 = 12x^3 + 6x^2 + 6x,
 *              l3 = 12x^3 + 6x^2 + 4x - 1 (Fuentes-Castaneda, Knapp, Rodriguez-Henriquez 2011).
 *   BLS12-381: lambda = 3; 3 (p^4 - p^2 + 1)/r = (x-1)^2 (x + p)(x^2 + p^2 - 1) + 3.
 * Both identities are checked in tests/test_pairing.c against a plain exponentiation. */
#if PAIR_BN
static void SN(hard)(E12T *r, const E12T *m)
{
    E12T a, b, c, a2, a6, b2, b6, c4, c12, K, L, N, T, u;
    SN(pow_x)(&a, m);                   /* a = m^x, b = m^x^2, c = m^x^3 */
    SN(pow_x)(&b, &a);
    SN(pow_x)(&c, &b);
    E12(sqr)(&a2, &a);                  /* a2 = m^2x, a6 = m^6x */
    E12(sqr)(&a6, &a2);
    E12(mul)(&a6, &a6, &a2);
    E12(sqr)(&b2, &b);                  /* b6 = m^6x^2 */
    E12(sqr)(&b6, &b2);
    E12(mul)(&b6, &b6, &b2);
    E12(sqr)(&c4, &c);                  /* c12 = m^12x^3 */
    E12(sqr)(&c4, &c4);
    E12(sqr)(&c12, &c4);
    E12(mul)(&c12, &c12, &c4);
    E12(mul)(&K, &c12, &b6);            /* K = m^l2 */
    E12(mul)(&K, &K, &a6);
    E12(conj)(&u, &a2);                 /* L = K / m^2x = m^l1 */
    E12(mul)(&L, &K, &u);
    E12(mul)(&N, &K, &b6);              /* N = K m^6x^2 m = m^l0 */
    E12(mul)(&N, &N, m);
    E12(conj)(&u, m);                   /* T = L / m = m^l3 */
    E12(mul)(&T, &L, &u);
    E12(frobenius)(&u, &L, 1);
    E12(mul)(&N, &N, &u);
    E12(frobenius)(&u, &K, 2);
    E12(mul)(&N, &N, &u);
    E12(frobenius)(&u, &T, 3);
    E12(mul)(r, &N, &u);
}
#else
static void SN(hard)(E12T *r, const E12T *m)
{
    E12T t, t2, t3, u;
    SN(pow_x)(&t, m);                   /* t = m^(x-1) */
    E12(conj)(&u, m);
    E12(mul)(&t, &t, &u);
    SN(pow_x)(&u, &t);                  /* t = m^((x-1)^2) */
    E12(conj)(&t, &t);
    E12(mul)(&t, &u, &t);
    SN(pow_x)(&t2, &t);                 /* t2 = t^(x + p) */
    E12(frobenius)(&u, &t, 1);
    E12(mul)(&t2, &t2, &u);
    SN(pow_x)(&t3, &t2);                /* t3 = t2^(x^2 + p^2 - 1) */
    SN(pow_x)(&t3, &t3);
    E12(frobenius)(&u, &t2, 2);
    E12(mul)(&t3, &t3, &u);
    E12(conj)(&u, &t2);
    E12(mul)(&t3, &t3, &u);
    E12(sqr)(&u, m);                    /* times m^3 */
    E12(mul)(&u, &u, m);
    E12(mul)(r, &t3, &u);
}
#endif

void PN(final_exp)(E12T *r, const E12T *a)
{
    E12T t, u;
    /* easy part: a^((p^6 - 1)(p^2 + 1)); afterwards t is in the cyclotomic subgroup, where
     * the inverse is the conjugate */
    E12(inv)(&u, a);
    E12(conj)(&t, a);
    E12(mul)(&t, &t, &u);
    E12(frobenius)(&u, &t, 2);
    E12(mul)(&t, &u, &t);
    SN(hard)(r, &t);
}

void PN(pairing)(E12T *r, const G1A *p, const G2A *q)
{
    E12T f;
    PN(miller_loop)(&f, p, q, 1);
    PN(final_exp)(r, &f);
}

bool PAIR_XCAT3(zp_pairing_, PC, _check)(const G1A *p, const G2A *q, size_t n)
{
    E12T f;
    PN(miller_loop)(&f, p, q, n);
    PN(final_exp)(&f, &f);
    return E12(is_one)(&f);
}

#undef QT
#undef Q
#undef E2T
#undef E6T
#undef E12T
#undef E2
#undef E6
#undef E12
#undef G1A
#undef G2A
#undef PN
#undef SN
