/* test_pairing.c - optimal ate pairing (lib/pairing) on both curves.
 * Known answers: e(G1, G2) as computed by ffjavascript 0.3.1 (snarkjs's field library; the
 * oracle in tests/oracle), and e(alpha1, beta2) == vk_alphabeta_12 plus a full Groth16
 * product check for every fixture in tests/fixtures/ that has verification_key.json.
 * Properties: final exponentiation equals a plain f^(lambda (q^12-1)/r) (constants below,
 * generated with Python big integers), bilinearity, e(P,Q) e(-P,Q) = 1 via the check,
 * non-degeneracy, e^r = 1, infinity gives 1, multi-pairing = product of single pairings
 * (more pairs than one internal batch). Prints the time of one pairing per curve.
 * The per-curve part below the #else is included twice (self-include, TC = curve). */
#ifndef TC
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ec/ec.h"
#include "lib/ff/ff.h"
#include "lib/pairing/pairing.h"
#include "lib/util/util.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); exit(1); } } while (0)
#define CAT3_(a, b, c) a##b##c
#define XCAT3(a, b, c) CAT3_(a, b, c)
#define STR_(a) #a
#define XSTR(a) STR_(a)

/* splitmix64 byte source: deterministic, so failures reproduce */
static int det_rnd(void *ctx, void *buf, size_t len)
{
    uint64_t *s = ctx;
    unsigned char *b = buf;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        memcpy(b + i, &z, len - i < 8 ? len - i : 8);
    }
    return 0;
}
static uint64_t seed = 2024;

/* ---- known answers from ffjavascript 0.3.1: generators and e(G1, G2), [2][3][2] flattened ---- */
static const char *const kat_bn254_g1[2] = {"1", "2"};
static const char *const kat_bn254_g2[4] = {
    "10857046999023057135944570762232829481370756359578518086990519993285655852781",
    "11559732032986387107991004021392285783925812861821192530917403151452391805634",
    "8495653923123431417604973247489272438418190587263600148770280649306958101930",
    "4082367875863433681332203403145435568316851327593401208105741076214120093531"};
static const char *const kat_bn254_e[12] = {
    "17264119758069723980713015158403419364912226240334615592005620718956030922389",
    "1300711225518851207585954685848229181392358478699795190245709208408267917898",
    "8894217292938489450175280157304813535227569267786222825147475294561798790624",
    "1829859855596098509359522796979920150769875799037311140071969971193843357227",
    "4968700049505451466697923764727215585075098085662966862137174841375779106779",
    "12814315002058128940449527172080950701976819591738376253772993495204862218736",
    "4233474252585134102088637248223601499779641130562251948384759786370563844606",
    "9420544134055737381096389798327244442442230840902787283326002357297404128074",
    "13457906610892676317612909831857663099224588803620954529514857102808143524905",
    "5122435115068592725432309312491733755581898052459744089947319066829791570839",
    "8891987925005301465158626530377582234132838601606565363865129986128301774627",
    "440796048150724096437130979851431985500142692666486515369083499585648077975"};
static const char *const kat_bls12_381_g1[2] = {
    "3685416753713387016781088315183077757961620795782546409894578378688607592378376318836054947676345821548104185464507",
    "1339506544944476473020471379941921221584933875938349620426543736416511423956333506472724655353366534992391756441569"};
static const char *const kat_bls12_381_g2[4] = {
    "352701069587466618187139116011060144890029952792775240219908644239793785735715026873347600343865175952761926303160",
    "3059144344244213709971259814753781636986470325476647558659373206291635324768958432433509563104347017837885763365758",
    "1985150602287291935568054521177171638300868978215655730859378665066344726373823718423869104263333984641494340347905",
    "927553665492332455747201965776037880757740193453592970025027978793976877002675564980949289727957565575433344219582"};
static const char *const kat_bls12_381_e[12] = {
    "2819105605953691245277803056322684086884703000473961065716485506033588504203831029066448642358042597501014294104502",
    "1323968232986996742571315206151405965104242542339680722164220900812303524334628370163366153839984196298685227734799",
    "2987335049721312504428602988447616328830341722376962214011674875969052835043875658579425548512925634040144704192135",
    "3879723582452552452538684314479081967502111497413076598816163759028842927668327542875108457755966417881797966271311",
    "261508182517997003171385743374653339186059518494239543139839025878870012614975302676296704930880982238308326681253",
    "231488992246460459663813598342448669854473942105054381511346786719005883340876032043606739070883099647773793170614",
    "3993582095516422658773669068931361134188738159766715576187490305611759126554796569868053818105850661142222948198557",
    "1074773511698422344502264006159859710502164045911412750831641680783012525555872467108249271286757399121183508900634",
    "2727588299083545686739024317998512740561167011046940249988557419323068809019137624943703910267790601287073339193943",
    "493643299814437640914745677854369670041080344349607504656543355799077485536288866009245028091988146107059514546594",
    "734401332196641441839439105942623141234148957972407782257355060229193854324927417865401895596108124443575283868655",
    "2348330098288556420918672502923664952620152483128593484301759394583320358354186482723629999370241674973832318248497"};

/* lambda (q^12 - 1)/r, lambda = 2x(6x^2+3x+1) (BN254) or 3 (BLS12-381), little-endian limbs:
 * python3: E = (q**12 - 1)//r * lam */
static const uint64_t fexp_bn254[47] = {
    0x5213f41abb31280ull, 0x73245a17663153caull, 0xada04fd6195b1c84ull, 0xcf22f374fe50166ull,
    0xe4ec10ae4fd7bd41ull, 0x82caf72c53ce75a1ull, 0xfb015e91736fc12dull, 0x5cd89edadc7f6a24ull,
    0x79cb73667e677008ull, 0x9f1b01890f1d7939ull, 0xed26ef2edfa24c27ull, 0xfe01315e736b15a5ull,
    0xcc60d3b2451ca64cull, 0x526944ab5c6420efull, 0x79a938e4250828f8ull, 0xbb3ba45c2a11d529ull,
    0xadca37ccfc4370e2ull, 0x1a3c5ccff0633ccfull, 0x45b0b16ce2fa52a6ull, 0x89e86168f2dc3b62ull,
    0xfe344123f46a377ull, 0xf10c145c5643815eull, 0xd5eae5572ad394deull, 0xdcb8cd82b389badcull,
    0xd4a8c292bf4cfb4full, 0x7a43d444e031e1aaull, 0xdab4ae0cde0ad0bdull, 0xd484877cd01d3197ull,
    0x565d8cd0db6fb15full, 0x519574a861926412ull, 0x94534abcb4cb59bbull, 0x32fe62aef859bdb0ull,
    0x2073bb80bbab9c22ull, 0xa5b65c435164e2ull, 0xfa58f710fda4be61ull, 0x4b66ec5d2d7e4493ull,
    0x7cfc246d4988280bull, 0x9a04cf66b6070c71ull, 0x9491aafcb243b9cfull, 0xa263cc1785a63aebull,
    0xb59337ff61628bb6ull, 0x94465792b4c3f8c1ull, 0xb5866c6aec784a26ull, 0x60bfc996f315f361ull,
    0xa0eb11404cc45385ull, 0xbd9ad132bcd28278ull, 0xb12091dc4ull,
};
static const uint64_t fexp_bls12_381[68] = {
    0x42362d2019e05f30ull, 0x71ec9292b3a3f16eull, 0xcc14f35af381dd9bull, 0xaa8e8db57364b4e0ull,
    0xbbd8542f1f4e813cull, 0x67448d0357e60280ull, 0x37e374d545d9b34bull, 0xdbe98538990b886ull,
    0x4f37addccc764259ull, 0xb126a5693d0c1648ull, 0xe2fab93c0cbe7336ull, 0x5be26fa7d750500cull,
    0xfd55b32bc26877full, 0x2789939db85ffd7eull, 0x8a8dbc483bf8b74cull, 0xee57b6df108eff59ull,
    0x44dc2a7f86c253a4ull, 0x1ab9a096b98465d0ull, 0xa19abe6ea2accb45ull, 0xd458de749460d4a2ull,
    0xefda3b46ebf86211ull, 0xbf503bd6ec0a0679ull, 0xee452496f5166c25ull, 0x533883a3513435f3ull,
    0xc49ebcd2352765full, 0xdd3ed254fdeda030ull, 0xf337b31c79222145ull, 0xdc89d154af91ad54ull,
    0x48986b14d9098746ull, 0xb600e6c98003bf85ull, 0xe543c4bc40bcd4c0ull, 0x1e5f07600ce6b407ull,
    0x5017931d6740bda7ull, 0x99edd44084bd2372ull, 0xb20f28c19e4105abull, 0x56cfa8c3574363efull,
    0x376e521070d29c9dull, 0x24ed5e515911037bull, 0xa9f5aa7994cec31bull, 0xc2f98fcdd0dd36caull,
    0xc2cb543d69430c37ull, 0xd4c1f3ac25e3167eull, 0x6f3496b2dd38e722ull, 0xc4347bb5a7e405dull,
    0x312d8a7d76233637ull, 0x167ff1323d6e99acull, 0x4dde0523678105d9ull, 0x4e2513d6e4a5d3bbull,
    0x9f28efa0d355b022ull, 0x773528bbae870697ull, 0x7ab1cd294a502304ull, 0x4b9783d9c6aa8129ull,
    0x133bdc3ca9412b98ull, 0x16e296a72928cfeeull, 0xfb77b732ba5f9948ull, 0xa9d6ff3a07dbd34eull,
    0x54207282314fc0deull, 0x5958cb8bfdae2d2dull, 0x15eacb2cf3218a16ull, 0x42009fe1bd6fcbceull,
    0x913caba6579c08fdull, 0x7315a664019fbd84ull, 0x468d8f473094aecbull, 0x5a2b2fe3bea73dfbull,
    0x7dc671be77cf1771ull, 0xdc3e541f9dca04bbull, 0x96587127a538fd40ull, 0x8ca5921ull,
};

/* ---- a tiny JSON reader for the fixtures: the quoted strings inside the value of "key" ---- */
enum { MAXS = 512, SLEN = 160 };
typedef struct { int n; char s[MAXS][SLEN]; } strs_t;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    CHECK(buf);
    CHECK(fread(buf, 1, (size_t)len, f) == (size_t)len);
    buf[len] = 0;
    fclose(f);
    return buf;
}

/* key NULL: the first array of the document */
static bool json_strs(strs_t *out, const char *doc, const char *key)
{
    const char *p = doc;
    out->n = 0;
    if (key) {
        char pat[64];
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(doc, pat);
        if (!p) return false;
        p += strlen(pat);
        while (*p == ' ' || *p == ':' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    } else {
        p = strchr(doc, '[');
        if (!p) return false;
    }
    int depth = 0;
    do {
        if (*p == '[') depth++;
        else if (*p == ']') depth--;
        else if (*p == '"') {
            const char *e = strchr(p + 1, '"');
            CHECK(e && e - p - 1 < SLEN && out->n < MAXS);
            memcpy(out->s[out->n], p + 1, (size_t)(e - p - 1));
            out->s[out->n][e - p - 1] = 0;
            out->n++;
            p = e;
            if (depth == 0) return true; /* a plain string value */
        } else if (*p == 0) return false;
        p++;
    } while (depth > 0);
    return true;
}

#define TC bn254
#define TC_JSON "bn128"
#include "test_pairing.c"
#undef TC
#undef TC_JSON
#define TC bls12_381
#define TC_JSON "bls12381"
#include "test_pairing.c"
#undef TC
#undef TC_JSON

int main(void)
{
    test_bn254();
    test_bls12_381();
    int nvk = 0;
    DIR *dir = opendir(ZP_FIXTURES_DIR);
    if (dir) {
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
            if (de->d_name[0] == '.') continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", ZP_FIXTURES_DIR, de->d_name);
            nvk += fixture_bn254(path) + fixture_bls12_381(path);
        }
        closedir(dir);
    }
    printf("pairing: %d fixture verification keys (vk_alphabeta_12, Groth16 check): ok\n", nvk);
    printf("pairing: ok\n");
    return 0;
}

#else /* ---- per-curve part ---- */
#define QT XCAT3(zp_fq_, TC, _t)
#define Q(x) XCAT3(zp_fq_, TC, _##x)
#define RT XCAT3(zp_fr_, TC, _t)
#define R(x) XCAT3(zp_fr_, TC, _##x)
#define E12T XCAT3(zp_fq12_, TC, _t)
#define E12(x) XCAT3(zp_fq12_, TC, _##x)
#define G1A XCAT3(zp_g1a_, TC, _t)
#define G2A XCAT3(zp_g2a_, TC, _t)
#define G1J XCAT3(zp_g1_, TC, _t)
#define G2J XCAT3(zp_g2_, TC, _t)
#define G1(x) XCAT3(zp_g1_, TC, _##x)
#define G2(x) XCAT3(zp_g2_, TC, _##x)
#define PAIR XCAT3(zp_pairing_, TC, )
#define CHECKF XCAT3(zp_pairing_, TC, _check)
#define MILLER XCAT3(zp_miller_loop_, TC, )
#define FEXP XCAT3(zp_final_exp_, TC, )
#define TN(x) XCAT3(x, _, TC)

static void TN(dec)(QT *r, const char *s) { CHECK(Q(from_dec)(r, s) == 0); }

static void TN(fq12_dec)(E12T *r, const char *const s[12])
{
    QT *c = &r->c0.c0.c0; /* the 12 Fq coefficients in [2][3][2] order */
    for (int i = 0; i < 12; i++) TN(dec)(&c[i], s[i]);
}

/* random scalar < r in standard form, and the same as an Fr element */
static void TN(rand_scalar)(zp_scalar_t *k, RT *kf)
{
    RT t;
    R(random)(kf, det_rnd, &seed);
    R(from_mont)(&t, kf);
    memcpy(k->l, t.l, sizeof k->l);
}

static void TN(fr_to_scalar)(zp_scalar_t *k, const RT *kf)
{
    RT t;
    R(from_mont)(&t, kf);
    memcpy(k->l, t.l, sizeof k->l);
}

static void TN(g1_mul)(G1A *r, const G1A *p, const zp_scalar_t *k)
{
    G1J j;
    G1(from_affine)(&j, p);
    G1(mul)(&j, &j, k);
    G1(to_affine)(r, &j);
}

static void TN(g2_mul)(G2A *r, const G2A *p, const zp_scalar_t *k)
{
    G2J j;
    G2(from_affine)(&j, p);
    G2(mul)(&j, &j, k);
    G2(to_affine)(r, &j);
}

static void TN(random_fq12)(E12T *r)
{
    QT *c = &r->c0.c0.c0;
    for (int i = 0; i < 12; i++) Q(random)(&c[i], det_rnd, &seed);
}

static void TN(test)(void)
{
    G1A g1, kg1, p, np, inf1;
    G2A g2, kg2, q, inf2;
    E12T e, e2, ref, t;
    memset(&inf1, 0, sizeof inf1);
    memset(&inf2, 0, sizeof inf2);
    G1(generator)(&g1);
    G2(generator)(&g2);
    /* the library generators are the ones of the known answers */
    TN(dec)(&kg1.x, XCAT3(kat_, TC, _g1)[0]);
    TN(dec)(&kg1.y, XCAT3(kat_, TC, _g1)[1]);
    TN(dec)(&kg2.x.c0, XCAT3(kat_, TC, _g2)[0]);
    TN(dec)(&kg2.x.c1, XCAT3(kat_, TC, _g2)[1]);
    TN(dec)(&kg2.y.c0, XCAT3(kat_, TC, _g2)[2]);
    TN(dec)(&kg2.y.c1, XCAT3(kat_, TC, _g2)[3]);
    CHECK(memcmp(&g1, &kg1, sizeof g1) == 0);
    CHECK(memcmp(&g2, &kg2, sizeof g2) == 0);

    /* known answer and non-degeneracy */
    PAIR(&e, &g1, &g2);
    TN(fq12_dec)(&ref, XCAT3(kat_, TC, _e));
    CHECK(E12(eq)(&e, &ref));
    CHECK(!E12(is_one)(&e));
    /* e^r = 1 */
    E12(pow)(&t, &e, R(modulus).l, 4);
    CHECK(E12(is_one)(&t));

    /* final exponentiation = plain f^(lambda (q^12-1)/r), on a Miller value and a random element */
    MILLER(&t, &g1, &g2, 1);
    FEXP(&e2, &t);
    CHECK(E12(eq)(&e2, &e));
    for (int i = 0; i < 2; i++) {
        TN(random_fq12)(&t);
        FEXP(&e2, &t);
        E12(pow)(&ref, &t, XCAT3(fexp_, TC, ), sizeof XCAT3(fexp_, TC, ) / 8);
        CHECK(E12(eq)(&e2, &ref));
    }

    /* bilinearity on random points: e(aP, bQ) = e(P, Q)^(ab) = e(abP, Q) = e(P, abQ) */
    for (int it = 0; it < 3; it++) {
        zp_scalar_t a, b, ab, s;
        RT af, bf, abf, sf;
        TN(rand_scalar)(&s, &sf);
        TN(g1_mul)(&p, &g1, &s);
        TN(rand_scalar)(&s, &sf);
        TN(g2_mul)(&q, &g2, &s);
        TN(rand_scalar)(&a, &af);
        TN(rand_scalar)(&b, &bf);
        R(mul)(&abf, &af, &bf);
        TN(fr_to_scalar)(&ab, &abf);
        G1A ap, abp;
        G2A bq, abq;
        TN(g1_mul)(&ap, &p, &a);
        TN(g2_mul)(&bq, &q, &b);
        TN(g1_mul)(&abp, &p, &ab);
        TN(g2_mul)(&abq, &q, &ab);
        PAIR(&e, &p, &q);
        E12(pow)(&ref, &e, ab.l, 4);
        PAIR(&e2, &ap, &bq);
        CHECK(E12(eq)(&e2, &ref));
        PAIR(&e2, &abp, &q);
        CHECK(E12(eq)(&e2, &ref));
        PAIR(&e2, &p, &abq);
        CHECK(E12(eq)(&e2, &ref));
        CHECK(!E12(eq)(&e, &ref));
        /* e(P,Q) e(-P,Q) = 1 through the check; e(P,Q) e(P,Q) != 1 */
        XCAT3(zp_g1a_, TC, _neg)(&np, &p);
        G1A ps[2] = {p, np};
        G2A qs[2] = {q, q};
        CHECK(CHECKF(ps, qs, 2));
        ps[1] = p;
        CHECK(!CHECKF(ps, qs, 2));
        /* e(aP, bQ) e(-abP, Q) = 1 */
        G1A ps2[2] = {ap, abp};
        G2A qs2[2] = {bq, q};
        XCAT3(zp_g1a_, TC, _neg)(&ps2[1], &abp);
        CHECK(CHECKF(ps2, qs2, 2));
    }

    /* infinity */
    PAIR(&e, &inf1, &g2);
    CHECK(E12(is_one)(&e));
    PAIR(&e, &g1, &inf2);
    CHECK(E12(is_one)(&e));
    MILLER(&e, &g1, &g2, 0);
    CHECK(E12(is_one)(&e));
    CHECK(CHECKF(&inf1, &inf2, 1));
    CHECK(CHECKF(NULL, NULL, 0));
    CHECK(!CHECKF(&g1, &g2, 1));

    /* multi-pairing over 11 pairs (more than one internal batch of 8), with infinities mixed in:
     * equals the product of single pairings; a balanced set passes the check */
    enum { NP = 11 };
    G1A ps[NP];
    G2A qs[NP];
    RT sum;
    memset(&sum, 0, sizeof sum);
    E12(one)(&ref);
    for (int i = 0; i < NP - 1; i++) {
        zp_scalar_t a, b;
        RT af, bf, abf;
        TN(rand_scalar)(&a, &af);
        TN(rand_scalar)(&b, &bf);
        TN(g1_mul)(&ps[i], &g1, &a);
        TN(g2_mul)(&qs[i], &g2, &b);
        if (i == 3) ps[i] = inf1;
        else if (i == 6) qs[i] = inf2;
        else {
            R(mul)(&abf, &af, &bf);
            R(add)(&sum, &sum, &abf);
        }
        PAIR(&e, &ps[i], &qs[i]);
        E12(mul)(&ref, &ref, &e);
    }
    zp_scalar_t s;
    R(neg)(&sum, &sum);
    TN(fr_to_scalar)(&s, &sum);
    TN(g1_mul)(&ps[NP - 1], &g1, &s);
    qs[NP - 1] = g2;
    MILLER(&e, ps, qs, NP - 1);
    FEXP(&e, &e);
    CHECK(E12(eq)(&e, &ref));
    CHECK(!E12(is_one)(&e));
    CHECK(CHECKF(ps, qs, NP));
    qs[0] = qs[1];
    CHECK(!CHECKF(ps, qs, NP));

    /* timing (informational): best of a few runs */
    G1A p4[4] = {g1, g1, g1, g1};
    G2A q4[4] = {g2, g2, g2, g2};
    uint64_t best1 = UINT64_MAX, best4 = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = zp_now_ns();
        PAIR(&e, &g1, &g2);
        uint64_t t1 = zp_now_ns();
        (void)CHECKF(p4, q4, 4);
        uint64_t t2 = zp_now_ns();
        if (t1 - t0 < best1) best1 = t1 - t0;
        if (t2 - t1 < best4) best4 = t2 - t1;
    }
    printf("pairing %s: known answer, final exp, bilinearity, check, infinity, multi: ok; "
           "one pairing %.2f ms, 4-pair check %.2f ms\n",
           XSTR(TC), best1 / 1e6, best4 / 1e6);
}

/* one fixture directory: vk_alphabeta_12 == e(alpha1, beta2), and the Groth16 equation
 * e(A, B) = e(alpha, beta) e(L, gamma) e(C, delta) for proof.json / public.json.
 * Returns 1 if the directory held a verification key of this curve. */
static int TN(fixture)(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/verification_key.json", dir);
    char *vk = slurp(path);
    if (!vk) return 0;
    strs_t *s = malloc(sizeof *s);
    CHECK(s);
    CHECK(json_strs(s, vk, "curve") && s->n == 1);
    if (strcmp(s->s[0], TC_JSON) != 0) { free(vk); free(s); return 0; }
    G1A alpha, A, C, L;
    G2A beta, gamma, delta, B;
#define RD_G1(pt, doc, key) do { CHECK(json_strs(s, doc, key) && s->n >= 2); TN(dec)(&(pt).x, s->s[0]); TN(dec)(&(pt).y, s->s[1]); } while (0)
#define RD_G2(pt, doc, key) do { CHECK(json_strs(s, doc, key) && s->n >= 4); TN(dec)(&(pt).x.c0, s->s[0]); TN(dec)(&(pt).x.c1, s->s[1]); \
        TN(dec)(&(pt).y.c0, s->s[2]); TN(dec)(&(pt).y.c1, s->s[3]); } while (0)
    RD_G1(alpha, vk, "vk_alpha_1");
    RD_G2(beta, vk, "vk_beta_2");
    RD_G2(gamma, vk, "vk_gamma_2");
    RD_G2(delta, vk, "vk_delta_2");
    CHECK(json_strs(s, vk, "vk_alphabeta_12") && s->n == 12);
    E12T e, ref;
    const char *ptrs[12];
    for (int i = 0; i < 12; i++) ptrs[i] = s->s[i];
    TN(fq12_dec)(&ref, ptrs);
    PAIR(&e, &alpha, &beta);
    CHECK(E12(eq)(&e, &ref));
    /* Groth16 check on the fixture's snarkjs proof */
    snprintf(path, sizeof path, "%s/proof.json", dir);
    char *pf = slurp(path);
    snprintf(path, sizeof path, "%s/public.json", dir);
    char *pub = slurp(path);
    if (pf && pub) {
        RD_G1(A, pf, "pi_a");
        RD_G2(B, pf, "pi_b");
        RD_G1(C, pf, "pi_c");
        strs_t *ic = malloc(sizeof *ic);
        CHECK(ic);
        CHECK(json_strs(ic, vk, "IC") && ic->n % 3 == 0);
        CHECK(json_strs(s, pub, NULL) && s->n == ic->n / 3 - 1);
        G1J acc, tj;
        G1A pt;
        TN(dec)(&pt.x, ic->s[0]);
        TN(dec)(&pt.y, ic->s[1]);
        G1(from_affine)(&acc, &pt);
        for (int i = 0; i < s->n; i++) {
            RT w;
            zp_scalar_t k;
            CHECK(R(from_dec)(&w, s->s[i]) == 0);
            TN(fr_to_scalar)(&k, &w);
            TN(dec)(&pt.x, ic->s[3 * (i + 1)]);
            TN(dec)(&pt.y, ic->s[3 * (i + 1) + 1]);
            G1(from_affine)(&tj, &pt);
            G1(mul)(&tj, &tj, &k);
            G1(add)(&acc, &acc, &tj);
        }
        G1(to_affine)(&L, &acc);
        G1A ps[4];
        G2A qs[4] = {B, beta, gamma, delta};
        XCAT3(zp_g1a_, TC, _neg)(&ps[0], &A);
        ps[1] = alpha;
        ps[2] = L;
        ps[3] = C;
        CHECK(CHECKF(ps, qs, 4));
        ps[3] = A; /* a wrong C fails */
        CHECK(!CHECKF(ps, qs, 4));
        free(ic);
    }
#undef RD_G1
#undef RD_G2
    free(pf);
    free(pub);
    free(vk);
    free(s);
    return 1;
}

#undef QT
#undef Q
#undef RT
#undef R
#undef E12T
#undef E12
#undef G1A
#undef G2A
#undef G1J
#undef G2J
#undef G1
#undef G2
#undef PAIR
#undef CHECKF
#undef MILLER
#undef FEXP
#undef TN
#endif
