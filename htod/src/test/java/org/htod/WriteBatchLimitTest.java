package org.htod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.htod.testkit.OpenedStores;
import org.htod.testkit.VerifyStores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A WriteBatch's size limit: what {@code put} accepts, {@code commit} commits. The limit is one
 * log record, counted as 64 bytes an operation beside its key and value; {@link
 * HtodStore#maxValueBytes()} is that limit less one operation and the largest key.
 */
@ExtendWith(VerifyStores.class)
class WriteBatchLimitTest {
    @Test
    void aBatchAtTheLimitCommitsAndOneByteMoreIsRefusedByPut(OpenedStores stores) {
        HtodStore store = TestStores.memory(stores);
        HtodMap<byte[], byte[]> m = store.map("m", Codec.bytes(), Codec.bytes());
        long limit = store.maxValueBytes() + 64 + Htod.MAX_KEY_BYTES; // the log record's room, as put counts it
        int each = (int) ((limit - 3 * 65) / 3); // three puts of 1-byte keys filling the limit to the byte
        int last = (int) (limit - 3 * 65 - 2L * each);
        try (WriteBatch b = store.batch()) {
            b.put(m, new byte[] {0}, new byte[each]).put(m, new byte[] {1}, new byte[each]).put(m, new byte[] {2},
                    new byte[last]);
            assertEquals(3, b.commit());
        }
        assertEquals(3, m.size());
        assertEquals(last, m.get(new byte[] {2}).length);
        try (WriteBatch b = store.batch()) {
            b.put(m, new byte[] {0}, new byte[each]).put(m, new byte[] {1}, new byte[each]);
            assertThrows(EntryTooLargeException.class, () -> b.put(m, new byte[] {2}, new byte[last + 1]));
        }
    }
}
