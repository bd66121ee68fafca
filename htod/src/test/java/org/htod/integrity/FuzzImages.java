package org.htod.integrity;

import java.util.ArrayList;
import java.util.List;
import org.htod.StorageMethod;

/**
 * The images the corruption fuzz damages, built once per JVM: for each storage method and each
 * write path (the log, and direct mode) a store closed cleanly, one synced and left open, and two
 * cut by a power loss (durability SYNC and NONE), with grains of 64, 128 and 512 bytes.
 */
final class FuzzImages {
    private static List<Images.Image> all;

    private FuzzImages() {}

    static synchronized List<Images.Image> all() {
        if (all == null) {
            List<Images.Image> out = new ArrayList<>();
            int[] grains = {64, 512, 128};
            int i = 0;
            for (boolean direct : new boolean[] {false, true}) {
                for (StorageMethod m : StorageMethod.values()) {
                    for (Images.Kind k : Images.Kind.values()) {
                        out.add(Images.build(new Images.Spec(m, k, grains[i % grains.length], 0x1D6E_0000L + i, direct)));
                        i++;
                    }
                }
            }
            all = List.copyOf(out);
        }
        return all;
    }
}
