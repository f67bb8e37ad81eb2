package syncular.jakarta.wire;

/**
 * The raw IEEE-754 bits of an {@code f64} value (SPEC Conventions: any bit pattern is valid). {@link RowCodec}'s
 * lossless decode yields this for FLOAT columns so that NaN payloads survive a decode/encode round trip byte for
 * byte, which a detour through {@code double} does not promise on every JVM and platform.
 */
public record Float64Bits(long bits) {
    public static Float64Bits of(double d) { return new Float64Bits(Double.doubleToRawLongBits(d)); }

    public double value() { return Double.longBitsToDouble(bits); }
}
