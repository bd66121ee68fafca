package org.htod.table;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.htod.core.CorruptStoreException;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;
import org.junit.jupiter.api.Test;

/**
 * A table's state as a log-mode open takes it from the checkpoint or the log, its checksums right
 * but its load factor or count impossible: refused as damage, as a direct-mode open refuses such a
 * header. A load factor of 0 was taken, and the table doubled without end at the next puts (a
 * store of 4 MB grew to 3 GB).
 */
class LoggedStateCheckTest {
    @Test
    void anImpossibleLoadFactorOrCountIsRefused() {
        TableStore ts = TableStore.open(Storage.create(new MemoryDevice(), ContainerConfig.builder().grain(64).logSize(0)
                .build()), TableOptions.defaults());
        HashtableOnDisk t = ts.table("t", true);
        InstallRecord.TableState st = t.state();
        for (InstallRecord.TableState bad : new InstallRecord.TableState[] {
                new InstallRecord.TableState(st.header(), st.tableId(), st.count(), st.array(), st.newArray(), st.moved(), 0),
                new InstallRecord.TableState(st.header(), st.tableId(), -1, st.array(), st.newArray(), st.moved(),
                        st.loadPermille())}) {
            CorruptStoreException e = assertThrows(CorruptStoreException.class,
                    () -> HashtableOnDisk.openLogged(ts.heap(), ts.gate(), st.header(), "t", TableOptions.defaults(), bad));
            assertTrue(e.getMessage().contains("load factor"), e.getMessage());
        }
        ts.close();
    }
}
