/* ec_impl.h - the group law of y^2 = x^3 + b written once; included by ec.c once per group
 * and curve (no include guard on purpose).
 *
 * Before including, ec.c defines:
 *   EC_G, EC_C   group (g1|g2) and curve (bn254|bls12_381) name parts
 *   EC_F         coordinate field (fq_bn254, fq2_bls12_381, ...): ops zp_<EC_F>_<op>
 *   EC_B         const zp_<EC_F>_t *: the curve constant b (Montgomery form)
 *   EC_ONE       const zp_<EC_F>_t *: 1 in Montgomery form
 *   EC_GEN       const affine generator
 *   EC_R         const zp_scalar_t *: the prime group order r
 *   EC_COFACTOR1 1 when the whole curve group has prime order r (subgroup check = on-curve)
 *   EC_NBYTES    bytes of one big-endian base-field coordinate in the compressed form
 *   EC_F_TO_BE, EC_F_FROM_BE, EC_F_LEXMAX   serialisation helpers (see ec.c)
 *   EC_FLAG_MASK, EC_FLAG_INF, EC_FLAG_SMALL, EC_FLAG_LARGE   compressed-form flag bytes
 * Invariants: coordinates are in Montgomery form and fully reduced; affine (0,0) and
 * Jacobian z == 0 are the point at infinity. Formulas (a = 0): dbl-2009-l, add-2007-bl,
 * madd-2007-bl (hyperelliptic.org EFD). Tests: tests/test_ec.c */

#define EC_CAT5_(a, b, c, d, e) a##b##c##d##e
#define EC_CAT5(a, b, c, d, e) EC_CAT5_(a, b, c, d, e)
#define EC_CAT3_(a, b, c) a##b##c
#define EC_CAT3(a, b, c) EC_CAT3_(a, b, c)
#define EC_P_T EC_CAT5(zp_, EC_G, _, EC_C, _t)
#define EC_PA_T EC_CAT5(zp_, EC_G, a_, EC_C, _t)
#define EC_FE_T EC_CAT3(zp_, EC_F, _t)
#define EC_FN(n) EC_CAT5(zp_, EC_G, _, EC_C, _##n)
#define EC_FNA(n) EC_CAT5(zp_, EC_G, a_, EC_C, _##n)
#define EC_SFN(n) EC_CAT5(ec_, EC_G, _, EC_C, _##n)
#define EC_FOP(op) EC_CAT3(zp_, EC_F, _##op)
#define f_add EC_FOP(add)
#define f_sub EC_FOP(sub)
#define f_dbl EC_FOP(dbl)
#define f_neg EC_FOP(neg)
#define f_mul EC_FOP(mul)
#define f_sqr EC_FOP(sqr)
#define f_inv EC_FOP(inv)
#define f_eq EC_FOP(eq)
#define f_is_zero EC_FOP(is_zero)
#define f_sqrt EC_FOP(sqrt)

void EC_FN(generator)(EC_PA_T *r) { *r = EC_GEN; }

void EC_FN(set_inf)(EC_P_T *r)
{
    memset(r, 0, sizeof *r);
    r->x = *EC_ONE;
    r->y = *EC_ONE;
}

bool EC_FN(is_inf)(const EC_P_T *p) { return f_is_zero(&p->z); }

bool EC_FNA(is_inf)(const EC_PA_T *p) { return f_is_zero(&p->x) && f_is_zero(&p->y); }

void EC_FN(from_affine)(EC_P_T *r, const EC_PA_T *a)
{
    if (EC_FNA(is_inf)(a)) {
        EC_FN(set_inf)(r);
        return;
    }
    r->x = a->x;
    r->y = a->y;
    r->z = *EC_ONE;
}

void EC_FN(to_affine)(EC_PA_T *r, const EC_P_T *p)
{
    if (EC_FN(is_inf)(p)) {
        memset(r, 0, sizeof *r);
        return;
    }
    EC_FE_T zi, zi2;
    f_inv(&zi, &p->z);
    f_sqr(&zi2, &zi);
    f_mul(&r->x, &p->x, &zi2);
    f_mul(&zi2, &zi2, &zi);
    f_mul(&r->y, &p->y, &zi2);
}

void EC_FN(batch_to_affine)(EC_PA_T *r, const EC_P_T *p, size_t n, EC_FE_T *scratch)
{
    if (n == 0) return;
    /* scratch[i] = product of the non-zero z of p[0..i-1] (Montgomery's trick) */
    EC_FE_T acc = *EC_ONE;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!f_is_zero(&p[i].z)) f_mul(&acc, &acc, &p[i].z);
    }
    f_inv(&acc, &acc);                          /* 1 / prod z */
    for (size_t i = n; i-- > 0;) {
        if (f_is_zero(&p[i].z)) {
            memset(&r[i], 0, sizeof r[i]);
            continue;
        }
        EC_FE_T zi, zi2, t;
        f_mul(&zi, &acc, &scratch[i]);          /* 1 / z_i */
        f_mul(&acc, &acc, &p[i].z);
        f_sqr(&zi2, &zi);
        f_mul(&t, &zi2, &zi);
        f_mul(&r[i].x, &p[i].x, &zi2);
        f_mul(&r[i].y, &p[i].y, &t);
    }
}

void EC_FN(dbl)(EC_P_T *r, const EC_P_T *p)
{
    if (EC_FN(is_inf)(p)) {
        *r = *p;
        return;
    }
    EC_FE_T a, b, c, d, e, f, z3;
    f_sqr(&a, &p->x);
    f_sqr(&b, &p->y);
    f_sqr(&c, &b);
    f_add(&d, &p->x, &b);
    f_sqr(&d, &d);
    f_sub(&d, &d, &a);
    f_sub(&d, &d, &c);
    f_dbl(&d, &d);                              /* D = 2((X+B)^2 - A - C) */
    f_dbl(&e, &a);
    f_add(&e, &e, &a);                          /* E = 3A */
    f_sqr(&f, &e);
    f_mul(&z3, &p->y, &p->z);
    f_dbl(&r->z, &z3);                          /* Z3 = 2YZ */
    f_sub(&r->x, &f, &d);
    f_sub(&r->x, &r->x, &d);                    /* X3 = F - 2D */
    f_sub(&d, &d, &r->x);
    f_mul(&d, &d, &e);
    f_dbl(&c, &c);
    f_dbl(&c, &c);
    f_dbl(&c, &c);
    f_sub(&r->y, &d, &c);                       /* Y3 = E(D - X3) - 8C */
}

void EC_FN(add)(EC_P_T *r, const EC_P_T *a, const EC_P_T *b)
{
    if (EC_FN(is_inf)(a)) {
        *r = *b;
        return;
    }
    if (EC_FN(is_inf)(b)) {
        *r = *a;
        return;
    }
    EC_FE_T z1z1, z2z2, u1, u2, s1, s2, h, i, j, rr, v, t;
    f_sqr(&z1z1, &a->z);
    f_sqr(&z2z2, &b->z);
    f_mul(&u1, &a->x, &z2z2);
    f_mul(&u2, &b->x, &z1z1);
    f_mul(&s1, &a->y, &b->z);
    f_mul(&s1, &s1, &z2z2);
    f_mul(&s2, &b->y, &a->z);
    f_mul(&s2, &s2, &z1z1);
    f_sub(&h, &u2, &u1);
    f_sub(&rr, &s2, &s1);
    if (f_is_zero(&h)) {
        if (f_is_zero(&rr)) {
            EC_FN(dbl)(r, a);
        } else {
            EC_FN(set_inf)(r);
        }
        return;
    }
    f_dbl(&rr, &rr);
    f_dbl(&i, &h);
    f_sqr(&i, &i);                              /* I = (2H)^2 */
    f_mul(&j, &h, &i);
    f_mul(&v, &u1, &i);
    f_add(&t, &a->z, &b->z);
    f_sqr(&t, &t);
    f_sub(&t, &t, &z1z1);
    f_sub(&t, &t, &z2z2);
    f_mul(&r->z, &t, &h);                       /* Z3 = ((Z1+Z2)^2 - Z1Z1 - Z2Z2) H */
    f_sqr(&t, &rr);
    f_sub(&t, &t, &j);
    f_sub(&t, &t, &v);
    f_sub(&r->x, &t, &v);                       /* X3 = r^2 - J - 2V */
    f_sub(&v, &v, &r->x);
    f_mul(&v, &v, &rr);
    f_mul(&s1, &s1, &j);
    f_dbl(&s1, &s1);
    f_sub(&r->y, &v, &s1);                      /* Y3 = r(V - X3) - 2 S1 J */
}

void EC_FN(add_affine)(EC_P_T *r, const EC_P_T *a, const EC_PA_T *b)
{
    if (EC_FNA(is_inf)(b)) {
        *r = *a;
        return;
    }
    if (EC_FN(is_inf)(a)) {
        EC_FN(from_affine)(r, b);
        return;
    }
    EC_FE_T z1z1, u2, s2, h, hh, i, j, rr, v, t;
    f_sqr(&z1z1, &a->z);
    f_mul(&u2, &b->x, &z1z1);
    f_mul(&s2, &b->y, &a->z);
    f_mul(&s2, &s2, &z1z1);
    f_sub(&h, &u2, &a->x);
    f_sub(&rr, &s2, &a->y);
    if (f_is_zero(&h)) {
        if (f_is_zero(&rr)) {
            EC_FN(dbl)(r, a);
        } else {
            EC_FN(set_inf)(r);
        }
        return;
    }
    f_dbl(&rr, &rr);
    f_sqr(&hh, &h);
    f_dbl(&i, &hh);
    f_dbl(&i, &i);                              /* I = 4 HH */
    f_mul(&j, &h, &i);
    f_mul(&v, &a->x, &i);
    f_add(&t, &a->z, &h);
    f_sqr(&t, &t);
    f_sub(&t, &t, &z1z1);
    f_sub(&t, &t, &hh);                         /* Z3 = (Z1+H)^2 - Z1Z1 - HH */
    EC_FE_T y1 = a->y;
    r->z = t;
    f_sqr(&t, &rr);
    f_sub(&t, &t, &j);
    f_sub(&t, &t, &v);
    f_sub(&r->x, &t, &v);                       /* X3 = r^2 - J - 2V */
    f_sub(&v, &v, &r->x);
    f_mul(&v, &v, &rr);
    f_mul(&y1, &y1, &j);
    f_dbl(&y1, &y1);
    f_sub(&r->y, &v, &y1);                      /* Y3 = r(V - X3) - 2 Y1 J */
}

void EC_FN(neg)(EC_P_T *r, const EC_P_T *a)
{
    r->x = a->x;
    f_neg(&r->y, &a->y);
    r->z = a->z;
}

void EC_FNA(neg)(EC_PA_T *r, const EC_PA_T *a)
{
    r->x = a->x;
    f_neg(&r->y, &a->y);                        /* -0 = 0: infinity stays (0,0) */
}

/* Left-to-right fixed 4-bit windows over all 256 bits of k (k need not be reduced). */
void EC_FN(mul)(EC_P_T *r, const EC_P_T *p, const zp_scalar_t *k)
{
    EC_P_T tab[16], acc;
    EC_FN(set_inf)(&tab[0]);
    tab[1] = *p;
    for (int i = 2; i < 16; i++) {
        if (i & 1)
            EC_FN(add)(&tab[i], &tab[i - 1], p);
        else
            EC_FN(dbl)(&tab[i], &tab[i / 2]);
    }
    EC_FN(set_inf)(&acc);
    for (int w = 63; w >= 0; w--) {
        if (!EC_FN(is_inf)(&acc))
            for (int s = 0; s < 4; s++) EC_FN(dbl)(&acc, &acc);
        unsigned d = (unsigned)(k->l[w / 16] >> (4 * (w % 16))) & 15;
        if (d) EC_FN(add)(&acc, &acc, &tab[d]);
    }
    *r = acc;
}

bool EC_FN(eq)(const EC_P_T *a, const EC_P_T *b)
{
    bool ia = EC_FN(is_inf)(a), ib = EC_FN(is_inf)(b);
    if (ia || ib) return ia && ib;
    EC_FE_T z1z1, z2z2, t1, t2;
    f_sqr(&z1z1, &a->z);
    f_sqr(&z2z2, &b->z);
    f_mul(&t1, &a->x, &z2z2);
    f_mul(&t2, &b->x, &z1z1);
    if (!f_eq(&t1, &t2)) return false;
    f_mul(&z1z1, &z1z1, &a->z);
    f_mul(&z2z2, &z2z2, &b->z);
    f_mul(&t1, &a->y, &z2z2);
    f_mul(&t2, &b->y, &z1z1);
    return f_eq(&t1, &t2);
}

/* y^2 == x^3 + b */
static bool EC_SFN(affine_eqn)(const EC_FE_T *x, const EC_FE_T *y)
{
    EC_FE_T l, rh;
    f_sqr(&l, y);
    f_sqr(&rh, x);
    f_mul(&rh, &rh, x);
    f_add(&rh, &rh, EC_B);
    return f_eq(&l, &rh);
}

bool EC_FNA(on_curve)(const EC_PA_T *p)
{
    if (EC_FNA(is_inf)(p)) return true;
    return EC_SFN(affine_eqn)(&p->x, &p->y);
}

bool EC_FN(on_curve)(const EC_P_T *p)
{
    if (EC_FN(is_inf)(p)) return true;
    EC_FE_T l, rh, z2, z6;
    f_sqr(&l, &p->y);
    f_sqr(&rh, &p->x);
    f_mul(&rh, &rh, &p->x);
    f_sqr(&z2, &p->z);
    f_sqr(&z6, &z2);
    f_mul(&z6, &z6, &z2);
    f_mul(&z6, &z6, EC_B);
    f_add(&rh, &rh, &z6);
    return f_eq(&l, &rh);
}

bool EC_FNA(in_subgroup)(const EC_PA_T *p)
{
    if (!EC_FNA(on_curve)(p)) return false;
#if EC_COFACTOR1
    return true;
#else
    EC_P_T j, t;
    EC_FN(from_affine)(&j, p);
    EC_FN(mul)(&t, &j, EC_R);
    return EC_FN(is_inf)(&t);
#endif
}

void EC_FNA(compress)(uint8_t *out, const EC_PA_T *p)
{
    if (EC_FNA(is_inf)(p)) {
        memset(out, 0, EC_NBYTES);
        out[0] = EC_FLAG_INF;
        return;
    }
    EC_F_TO_BE(out, &p->x);
    out[0] |= EC_F_LEXMAX(&p->y) ? EC_FLAG_LARGE : EC_FLAG_SMALL;
}

int EC_FNA(decompress)(EC_PA_T *r, const uint8_t *in)
{
    uint8_t buf[EC_NBYTES];
    uint8_t flags = in[0] & EC_FLAG_MASK;
    memcpy(buf, in, EC_NBYTES);
    buf[0] &= (uint8_t)~EC_FLAG_MASK;
    if (flags == EC_FLAG_INF) {
        for (size_t i = 0; i < EC_NBYTES; i++)
            if (buf[i])
                return zp_err_set(ZP_EFORMAT, "compressed %s point: infinity flag with non-zero x",
                                  EC_NAME);
        memset(r, 0, sizeof *r);
        return 0;
    }
    if (flags != EC_FLAG_SMALL && flags != EC_FLAG_LARGE)
        return zp_err_set(ZP_EFORMAT, "compressed %s point: invalid flag bits 0x%02x", EC_NAME,
                          flags);
    EC_PA_T p;
    if (EC_F_FROM_BE(&p.x, buf) != 0)
        return zp_err_set(ZP_EFORMAT, "compressed %s point: x is not below the field modulus",
                          EC_NAME);
    EC_FE_T y2;
    f_sqr(&y2, &p.x);
    f_mul(&y2, &y2, &p.x);
    f_add(&y2, &y2, EC_B);
    if (!f_sqrt(&p.y, &y2))
        return zp_err_set(ZP_EFORMAT, "compressed %s point: x is not on the curve", EC_NAME);
    if (!EC_SFN(affine_eqn)(&p.x, &p.y))    /* guards against a wrong root */
        return zp_err_set(ZP_EFORMAT, "compressed %s point: x is not on the curve", EC_NAME);
    if (EC_F_LEXMAX(&p.y) != (flags == EC_FLAG_LARGE)) f_neg(&p.y, &p.y);
    if (!EC_FNA(in_subgroup)(&p))
        return zp_err_set(ZP_EFORMAT, "compressed %s point: not in the prime-order subgroup",
                          EC_NAME);
    *r = p;
    return 0;
}

#undef f_add
#undef f_sub
#undef f_dbl
#undef f_neg
#undef f_mul
#undef f_sqr
#undef f_inv
#undef f_eq
#undef f_is_zero
#undef f_sqrt
#undef EC_P_T
#undef EC_PA_T
#undef EC_FE_T
#undef EC_FN
#undef EC_FNA
#undef EC_SFN
#undef EC_FOP
