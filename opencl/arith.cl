// Modular arithmetic on 64-bit words for moduli q < 2^60 (SEAL's limit).
// Mirrors src/arith: every helper here has a host reference of the same name there.

typedef ulong u64;
typedef uint u32;
