package org.htod.core.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.htod.core.StoreClosedException;
import org.htod.core.container.ContainerConfig;
import org.htod.core.container.StorageMethod;
import org.htod.core.device.MemoryDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class StorageTest {

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(ByteBuffer b) {
        return StandardCharsets.UTF_8.decode(b).toString();
    }

    private static ContainerConfig config(StorageMethod m) {
        return ContainerConfig.builder().storageMethod(m).logSize(0).build();
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void cleanCloseReopensFromTheSnapshotAndMarksTheStoreDirtyWhileOpen(StorageMethod m) {
        MemoryDevice dev = new MemoryDevice();
        long a;
        long b;
        try (Storage s = Storage.create(dev, config(m))) {
            a = s.heap().allocate(text("alpha"));
            b = s.heap().allocate(text("beta"));
            s.heap().free(s.heap().allocate(text("gone")));
            s.setRootCatalog(a);
        }
        Storage s = Storage.open(dev.reopen());
        assertEquals("snapshot", s.recoveryReport().path());
        assertFalse(s.superblock().clean(), "an open store is marked not clean on disk");
        assertEquals(0, s.superblock().snapshotLength(), "the snapshot is forgotten once the store is open");
        assertEquals(a, s.rootCatalog());
        assertEquals(s.heap().address(a), s.superblock().rootCatalog(), "the superblock holds the block's address");
        assertEquals("alpha", text(s.heap().read(a)));
        assertEquals("beta", text(s.heap().read(b)));
        s.close();
        assertThrows(StoreClosedException.class, () -> s.heap().read(a));
        s.close(); // idempotent
    }

    @ParameterizedTest
    @EnumSource(StorageMethod.class)
    void anUncleanStoreIsRecoveredByItsMethod(StorageMethod m) {
        MemoryDevice dev = new MemoryDevice();
        Storage s = Storage.create(dev, config(m));
        long a = s.heap().allocate(text("kept"));
        s.setRootCatalog(a); // the store's creation is complete once a root catalog is recorded
        s.heap().sync();
        // No close: the process died. The device still holds what was synced.
        Storage again = Storage.open(dev);
        String path = again.recoveryReport().path();
        assertTrue(path.equals("scan") || path.equals("lists"), "recovered by " + path);
        assertEquals("kept", text(again.heap().read(a)));
        again.close();
    }

    @Test
    void aCreationCutShortBeforeTheRootCatalogIsFormattedAgain() {
        MemoryDevice dev = new MemoryDevice();
        Storage s = Storage.create(dev, config(StorageMethod.TS));
        s.heap().allocate(text("half-made"));
        s.heap().sync();
        Storage again = Storage.open(dev);
        assertEquals("new", again.recoveryReport().path());
        assertEquals(0, again.heap().stats().allocatedBlocks());
        again.close();
    }

    @Test
    void aTruncatedStoreIsRefusedAndNotWritten() {
        MemoryDevice dev = new MemoryDevice();
        Storage s = Storage.create(dev, config(StorageMethod.TS));
        long a = s.heap().allocate(text("kept"));
        s.setRootCatalog(a);
        long heapOffset = s.superblock().heapOffset();
        s.close();
        dev = dev.reopen();
        MemoryDevice cut = new MemoryDevice();
        ByteBuffer head = ByteBuffer.allocate((int) heapOffset);
        dev.read(0, head);
        cut.write(0, head.flip());
        byte[] before = bytes(cut);
        org.htod.core.CorruptStoreException e = assertThrows(
                org.htod.core.CorruptStoreException.class, () -> Storage.open(cut));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        org.junit.jupiter.api.Assertions.assertArrayEquals(before, bytes(cut), "a failed open writes nothing");
    }

    private static byte[] bytes(MemoryDevice d) {
        ByteBuffer b = ByteBuffer.allocate((int) d.size());
        d.read(0, b);
        return b.array();
    }
}
