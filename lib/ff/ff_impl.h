/* ff_impl.h - TEMPLATE (no include guard): the public ff.h API of one prime field.
 * Included by ff.c once per field after ff_inline.h, with
 *   FF      field name (fr_bn254, ...)    FF_N   limb count
 *   FF_TS   1: sqrt by Tonelli-Shanks (p = 1 mod 4, constants TS_S, TS_TM1H, TS_C)
 *           0: sqrt by a^((p+1)/4) (p = 3 mod 4, constant PP1Q)
 * Invariants: Montgomery form, little-endian 64-bit limbs, every result fully reduced.
 * Tests: tests/test_ff.c */

#define FT FF_XCAT3(zp_, FF, _t)
#define FN(x) FF_XCAT3(zp_, FF, _##x)
#define FC(x) FF_XCAT3(FFC_, FF, _##x)
#define FP FF_XCAT3(zp_ffp_, FF, _)

const FT FN(modulus) = {FC(P)};
const FT FN(one) = {FC(ONE)};
const FT FN(r2) = {FC(R2)};

void FN(add)(FT *r, const FT *a, const FT *b) { FN(add_inl)(r, a, b); }
void FN(sub)(FT *r, const FT *a, const FT *b) { FN(sub_inl)(r, a, b); }
void FN(neg)(FT *r, const FT *a) { FN(neg_inl)(r, a); }
void FN(dbl)(FT *r, const FT *a) { FN(dbl_inl)(r, a); }
void FN(mul)(FT *r, const FT *a, const FT *b) { FN(mul_inl)(r, a, b); }
void FN(sqr)(FT *r, const FT *a) { FN(sqr_inl)(r, a); }
bool FN(is_zero)(const FT *a) { return FN(is_zero_inl)(a); }
bool FN(eq)(const FT *a, const FT *b) { return FN(eq_inl)(a, b); }
bool FN(is_one)(const FT *a) { return FN(eq_inl)(a, &FN(one)); }

void FN(pow)(FT *r, const FT *a, const uint64_t *e, size_t elimbs)
{
    FT x = *a, acc = FN(one);
    size_t top = elimbs;
    while (top > 0 && e[top - 1] == 0)
        top--;
    if (top == 0) {
        *r = acc;
        return;
    }
    int bit = 63 - __builtin_clzll(e[top - 1]);
    bool started = false;
    for (size_t li = top; li-- > 0;) {
        for (; bit >= 0; bit--) {
            if (started)
                FN(sqr_inl)(&acc, &acc);
            if ((e[li] >> bit) & 1) {
                if (started)
                    FN(mul_inl)(&acc, &acc, &x);
                else
                    acc = x;
                started = true;
            }
        }
        bit = 63;
    }
    *r = acc;
}

void FN(inv)(FT *r, const FT *a)
{
    static const uint64_t pm2[FF_N] = FC(PM2);
    if (FN(is_zero_inl)(a)) {
        *r = *a;
        return;
    }
    FN(pow)(r, a, pm2, FF_N);
}

void FN(inv_vartime)(FT *r, const FT *a)
{
    enum { L = 64 * FF_N / 62 + 1 };             /* signed62 limbs: 5 for 4 limbs, 7 for 6 */
    if (FN(is_zero_inl)(a)) {
        *r = *a;
        return;
    }
    int64_t p62[L], c62[L];
    ffi_to62(p62, FN(modulus).l, FF_N, L);
    ffi_to62(c62, FN(r2).l, FF_N, L);           /* R^2 / (a R) = a^-1 R */
    uint64_t out[FF_N];
    ffi_inv(out, a->l, FN(modulus).l, p62, c62, FF_N, L);
    memcpy(r->l, out, sizeof out);
}

/* Montgomery's trick over a[0..n) with one inversion inv */
static void FN(batch_inv_with)(FT *a, size_t n, FT *scratch, void (*inv)(FT *, const FT *))
{
    FT acc = FN(one);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!FN(is_zero_inl)(&a[i]))
            FN(mul_inl)(&acc, &acc, &a[i]);
    }
    inv(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (FN(is_zero_inl)(&a[i]))
            continue;
        FT t;
        FN(mul_inl)(&t, &acc, &scratch[i]); /* 1/a[i] */
        FN(mul_inl)(&acc, &acc, &a[i]);
        a[i] = t;
    }
}

void FN(batch_inv)(FT *a, size_t n, FT *scratch) { FN(batch_inv_with)(a, n, scratch, FN(inv)); }

void FN(batch_inv_vartime)(FT *a, size_t n, FT *scratch) { FN(batch_inv_with)(a, n, scratch, FN(inv_vartime)); }

bool FN(is_square)(const FT *a)
{
    static const uint64_t pm1h[FF_N] = FC(PM1H);
    if (FN(is_zero_inl)(a))
        return true;
    FT t;
    FN(pow)(&t, a, pm1h, FF_N);
    return FN(eq_inl)(&t, &FN(one));
}

bool FN(sqrt)(FT *r, const FT *a)
{
    if (FN(is_zero_inl)(a)) {
        *r = *a;
        return true;
    }
#if FF_TS
    static const uint64_t tm1h[FF_N] = FC(TS_TM1H);
    static const FT c0 = {FC(TS_C)};
    FT w, x, b, z = c0;
    FN(pow)(&w, a, tm1h, FF_N);   /* a^((t-1)/2) */
    FN(mul_inl)(&x, a, &w);       /* a^((t+1)/2) */
    FN(mul_inl)(&b, &x, &w);      /* a^t */
    unsigned v = FC(TS_S);
    while (!FN(eq_inl)(&b, &FN(one))) {
        unsigned m = 0;
        FT b2 = b;
        while (!FN(eq_inl)(&b2, &FN(one))) {
            FN(sqr_inl)(&b2, &b2);
            m++;
            if (m == v)
                return false;     /* a is not a square */
        }
        FT tt = z;
        for (unsigned i = 0; i + m + 1 < v; i++)
            FN(sqr_inl)(&tt, &tt);
        FN(sqr_inl)(&z, &tt);
        FN(mul_inl)(&b, &b, &z);
        FN(mul_inl)(&x, &x, &tt);
        v = m;
    }
    *r = x;
    return true;
#else
    static const uint64_t pp1q[FF_N] = FC(PP1Q);
    FT x, c;
    FN(pow)(&x, a, pp1q, FF_N);
    FN(sqr_inl)(&c, &x);
    if (!FN(eq_inl)(&c, a))
        return false;
    *r = x;
    return true;
#endif
}

void FN(to_mont)(FT *r, const FT *a) { FN(mul_inl)(r, a, &FN(r2)); }

void FN(from_mont)(FT *r, const FT *a)
{
    static const FT plain_one = {{1}};
    FN(mul_inl)(r, a, &plain_one);
}

void FN(set_u64)(FT *r, uint64_t v)
{
    FT t = {{0}};
    t.l[0] = v;
    FN(to_mont)(r, &t);
}

bool FN(is_canonical)(const FT *a)
{
    for (int j = FF_N - 1; j >= 0; j--) {
        if (a->l[j] != FP[j])
            return a->l[j] < FP[j];
    }
    return false;
}

static int FN(from_plain_)(FT *r, const FT *t)
{
    if (!FN(is_canonical)(t))
        return zp_err_set(ZP_EFORMAT, "%s element is not below the modulus", FF_STR(FF));
    FN(to_mont)(r, t);
    return 0;
}

int FN(from_bytes_le)(FT *r, const uint8_t *b)
{
    FT t;
    for (int j = 0; j < FF_N; j++) {
        uint64_t w = 0;
        for (int k = 7; k >= 0; k--)
            w = (w << 8) | b[8 * j + k];
        t.l[j] = w;
    }
    return FN(from_plain_)(r, &t);
}

int FN(from_bytes_be)(FT *r, const uint8_t *b)
{
    FT t;
    for (int j = 0; j < FF_N; j++) {
        uint64_t w = 0;
        const uint8_t *q = b + 8 * (FF_N - 1 - j);
        for (int k = 0; k < 8; k++)
            w = (w << 8) | q[k];
        t.l[j] = w;
    }
    return FN(from_plain_)(r, &t);
}

void FN(to_bytes_le)(uint8_t *b, const FT *a)
{
    FT t;
    FN(from_mont)(&t, a);
    for (int j = 0; j < FF_N; j++)
        for (int k = 0; k < 8; k++)
            b[8 * j + k] = (uint8_t)(t.l[j] >> (8 * k));
}

void FN(to_bytes_be)(uint8_t *b, const FT *a)
{
    FT t;
    FN(from_mont)(&t, a);
    for (int j = 0; j < FF_N; j++) {
        uint8_t *q = b + 8 * (FF_N - 1 - j);
        for (int k = 0; k < 8; k++)
            q[k] = (uint8_t)(t.l[j] >> (8 * (7 - k)));
    }
}

int FN(from_dec)(FT *r, const char *s)
{
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (*s == '\0')
        return zp_err_set(ZP_EFORMAT, "%s: empty number", FF_STR(FF));
    FT t = {{0}};
    for (const char *c = s; *c; c++) {
        unsigned d;
        if (*c >= '0' && *c <= '9')
            d = (unsigned)(*c - '0');
        else if (base == 16 && *c >= 'a' && *c <= 'f')
            d = (unsigned)(*c - 'a' + 10);
        else if (base == 16 && *c >= 'A' && *c <= 'F')
            d = (unsigned)(*c - 'A' + 10);
        else
            return zp_err_set(ZP_EFORMAT, "%s: bad character '%c' in number", FF_STR(FF), *c);
        uint64_t carry = d;
        for (int j = 0; j < FF_N; j++) {
            zp_u128 x = (zp_u128)t.l[j] * base + carry;
            t.l[j] = (uint64_t)x;
            carry = (uint64_t)(x >> 64);
        }
        if (carry)
            return zp_err_set(ZP_EFORMAT, "%s: number too large", FF_STR(FF));
    }
    return FN(from_plain_)(r, &t);
}

size_t FN(to_dec)(char *buf, size_t cap, const FT *a)
{
    FT t;
    FN(from_mont)(&t, a);
    char tmp[24 * FF_N + 4];
    size_t pos = sizeof(tmp);
    tmp[--pos] = '\0';
    bool nz;
    do {
        /* divide t by 10^19, 19 digits per round */
        const uint64_t d = 10000000000000000000ULL;
        uint64_t rem = 0;
        nz = false;
        for (int j = FF_N - 1; j >= 0; j--) {
            zp_u128 x = ((zp_u128)rem << 64) | t.l[j];
            t.l[j] = (uint64_t)(x / d);
            rem = (uint64_t)(x % d);
            nz |= t.l[j] != 0;
        }
        for (int k = 0; k < 19; k++) {
            tmp[--pos] = (char)('0' + rem % 10);
            rem /= 10;
            if (!nz && rem == 0)
                break;
        }
    } while (nz);
    size_t len = sizeof(tmp) - 1 - pos;
    if (cap > 0) {
        size_t n = len < cap - 1 ? len : cap - 1;
        memcpy(buf, tmp + pos, n);
        buf[n] = '\0';
    }
    return len;
}

void FN(random)(FT *r, int (*rnd)(void *ctx, void *buf, size_t len), void *ctx)
{
    const unsigned topbits = FC(BITS) - 64 * (FF_N - 1);
    const uint64_t topmask = topbits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << topbits) - 1);
    for (int tries = 0; tries < 1000; tries++) {
        uint8_t b[8 * FF_N];
        if (rnd(ctx, b, sizeof(b)) != 0)
            break;
        FT t;
        for (int j = 0; j < FF_N; j++) {
            uint64_t w = 0;
            for (int k = 7; k >= 0; k--)
                w = (w << 8) | b[8 * j + k];
            t.l[j] = w;
        }
        t.l[FF_N - 1] &= topmask;
        if (FN(is_canonical)(&t)) {
            FN(to_mont)(r, &t);
            return;
        }
    }
    memset(r, 0, sizeof(*r)); /* the random source failed */
}

#undef FT
#undef FN
#undef FC
#undef FP
