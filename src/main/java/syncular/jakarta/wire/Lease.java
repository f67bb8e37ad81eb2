package syncular.jakarta.wire;

/** LEASE (0x19): an auth lease, at most one, immediately after RESP_HEADER (SPEC §7.3.2). */
public record Lease(String leaseId, long expiresAtMs) implements ResponseFrame {
    public Lease {
        Checks.nonEmpty(leaseId, "LEASE.leaseId");
        Checks.safe(expiresAtMs, "LEASE.expiresAtMs");
    }

    @Override public int frameType() { return FrameType.LEASE.code(); }
}
