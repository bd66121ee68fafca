package org.htod.infinispan;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells BlockHound that htod's device reads, writes and syncs block. BlockHound does not count a
 * positional {@code FileChannel} read or write as blocking by itself, so without this the kit's
 * non-blocking check would not see a store doing its file I/O on the caller's thread. Loaded by
 * BlockHound from {@code META-INF/services} when Infinispan's test listener installs it.
 */
public class HtodBlockHoundIntegration implements BlockHoundIntegration {
    private static final String[] DEVICES = {"org.htod.core.device.FileDevice", "org.htod.core.device.RawDevice"};

    @Override
    public void applyTo(BlockHound.Builder builder) {
        for (String device : DEVICES) {
            builder.markAsBlocking(device, "read", "(JLjava/nio/ByteBuffer;)V");
            builder.markAsBlocking(device, "write", "(JLjava/nio/ByteBuffer;)V");
            builder.markAsBlocking(device, "sync", "()V");
        }
    }
}
