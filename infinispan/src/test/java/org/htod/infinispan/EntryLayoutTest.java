package org.htod.infinispan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.infinispan.commons.io.ByteBufferFactoryImpl;
import org.infinispan.marshall.TestObjectStreamMarshaller;
import org.infinispan.marshall.persistence.impl.MarshalledEntryFactoryImpl;
import org.infinispan.marshall.persistence.impl.MarshalledEntryUtil;
import org.infinispan.metadata.EmbeddedMetadata;
import org.infinispan.metadata.Metadata;
import org.infinispan.persistence.spi.MarshallableEntry;
import org.infinispan.test.AbstractInfinispanTest;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * The byte layout of an entry ({@link EntryLayout}, docs/INFINISPAN.md): fields, round trip,
 * damage. Run by TestNG beside the kit, whose marshaller needs the kit's test tracking; the
 * assertions are JUnit's.
 */
@Test(groups = "unit", testName = "persistence.htod.EntryLayoutTest")
public class EntryLayoutTest extends AbstractInfinispanTest {
    private TestObjectStreamMarshaller marshaller;
    /** The kit's entry factory, typed once: its class implements the raw interface. */
    private org.infinispan.persistence.spi.MarshallableEntryFactory<Object, Object> entries;
    private final ByteBufferFactoryImpl buffers = new ByteBufferFactoryImpl();

    @BeforeMethod(alwaysRun = true)
    public void startMarshaller() {
        marshaller = new TestObjectStreamMarshaller();
        entries = cast(new MarshalledEntryFactoryImpl(marshaller));
    }

    @AfterMethod(alwaysRun = true)
    public void stopMarshaller() {
        marshaller.stop();
    }

    public void mortalEntryKeepsEveryPartAndItsExpiry() {
        Metadata meta = new EmbeddedMetadata.Builder().lifespan(60_000).maxIdle(10_000).build();
        MarshallableEntry<Object, Object> e = MarshalledEntryUtil.create("k", "v", meta, 1_000, 5_000, marshaller);
        byte[] stored = EntryLayout.encode(e);

        ByteBuffer b = ByteBuffer.wrap(stored);
        assertEquals(EntryLayout.VERSION, b.get(EntryLayout.VERSION_OFFSET));
        assertEquals(1_000, b.getLong(EntryLayout.CREATED_OFFSET));
        assertEquals(5_000, b.getLong(EntryLayout.LAST_USED_OFFSET));
        // min(created + lifespan, last used + max idle) = min(61,000, 15,000)
        assertEquals(15_000, EntryLayout.expiry(stored));
        assertEquals(e.getValueBytes().getLength(), b.getInt(EntryLayout.VALUE_LENGTH_OFFSET));
        assertEquals(e.getMetadataBytes().getLength(), b.getInt(EntryLayout.METADATA_LENGTH_OFFSET));
        assertEquals(-1, b.getInt(EntryLayout.INTERNAL_LENGTH_OFFSET));

        MarshallableEntry<Object, Object> back = EntryLayout.decode("k", stored, true, entries, buffers);
        assertEquals("v", back.getValue());
        assertEquals(60_000, back.getMetadata().lifespan());
        assertEquals(10_000, back.getMetadata().maxIdle());
        assertEquals(1_000, back.created());
        assertEquals(5_000, back.lastUsed());
        assertEquals(15_000, back.expiryTime());

        assertFalse(EntryLayout.expired(stored, 14_999));
        assertTrue(EntryLayout.expired(stored, 15_000), "dead when the expiry is reached, as Infinispan judges it");
    }

    public void withoutValueTheMetadataStays() {
        Metadata meta = new EmbeddedMetadata.Builder().lifespan(1_000).build();
        byte[] stored = EntryLayout.encode(MarshalledEntryUtil.create("k", "v", meta, 7, 7, marshaller));
        MarshallableEntry<Object, Object> keysOnly = EntryLayout.decode("k", stored, false, entries, buffers);
        assertNull(keysOnly.getValueBytes());
        assertEquals(1_000, keysOnly.getMetadata().lifespan());
    }

    /** The worked example of docs/INFINISPAN.md: an immortal entry whose value bytes are 0xCAFE. */
    public void immortalEntryBytesAreThoseOfTheDocs() {
        MarshallableEntry<Object, Object> e = entries.create(buffers.newByteBuffer(new byte[] {1}),
                buffers.newByteBuffer(new byte[] {(byte) 0xCA, (byte) 0xFE}), (org.infinispan.commons.io.ByteBuffer) null, (org.infinispan.commons.io.ByteBuffer) null, -1, -1);
        String hex = HexFormat.of().formatHex(EntryLayout.encode(e));
        assertEquals("01" + "ffffffffffffffff" + "ffffffffffffffff" + "ffffffffffffffff"
                + "00000002" + "ffffffff" + "ffffffff" + "cafe", hex);
        assertFalse(EntryLayout.expired(HexFormat.of().parseHex(hex), Long.MAX_VALUE), "-1: never expires");
    }

    public void damagedBytesAreATypedError() {
        byte[] stored = EntryLayout.encode(MarshalledEntryUtil.create("k", "v", marshaller));
        EntryFormatException shortOne = assertThrows(EntryFormatException.class,
                () -> EntryLayout.expiry(new byte[10]));
        assertTrue(shortOne.getMessage().contains("shorter than the 37-byte header"), shortOne.getMessage());

        byte[] newer = stored.clone();
        newer[0] = 2;
        EntryFormatException version = assertThrows(EntryFormatException.class, () -> EntryLayout.expiry(newer));
        assertTrue(version.getMessage().contains("expected entry layout version 1 at byte 0, found 2"), version.getMessage());

        byte[] truncated = java.util.Arrays.copyOf(stored, stored.length - 1);
        EntryFormatException lengths = assertThrows(EntryFormatException.class,
                () -> EntryLayout.decode("k", truncated, true, entries, buffers));
        assertTrue(lengths.getMessage().contains("adding up"), lengths.getMessage());
    }

    public void valueBytesAreCopiedExactly() {
        byte[] value = new byte[300];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) i;
        }
        MarshallableEntry<Object, Object> e = entries.create(buffers.newByteBuffer(new byte[] {9}),
                buffers.newByteBuffer(value, 0, value.length), (org.infinispan.commons.io.ByteBuffer) null, (org.infinispan.commons.io.ByteBuffer) null, -1, -1);
        MarshallableEntry<Object, Object> back = EntryLayout.decode(buffers.newByteBuffer(new byte[] {9}),
                EntryLayout.encode(e), true, entries, buffers);
        assertArrayEquals(value, back.getValueBytes().trim());
    }

    @SuppressWarnings("unchecked")
    private static <K, V> org.infinispan.persistence.spi.MarshallableEntryFactory<K, V> cast(MarshalledEntryFactoryImpl f) {
        return f;
    }
}
