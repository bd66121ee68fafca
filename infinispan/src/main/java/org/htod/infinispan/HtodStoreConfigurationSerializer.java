package org.htod.infinispan;

import org.infinispan.commons.configuration.io.ConfigurationWriter;
import org.infinispan.configuration.serializing.AbstractStoreSerializer;
import org.infinispan.configuration.serializing.ConfigurationSerializer;

/**
 * Writes an {@link HtodStoreConfiguration} as {@link HtodStoreConfigurationParser} reads it: the
 * element {@code <htod-store>} in this store's namespace, every attribute set (this store's and
 * those common to Infinispan stores) by its name, then write-behind and properties. Infinispan
 * writes a cache's configuration when it creates a cache across a cluster ({@code
 * administration().createCache}), keeps it in its global state, or shows it; each node parses
 * it back.
 */
public class HtodStoreConfigurationSerializer extends AbstractStoreSerializer
        implements ConfigurationSerializer<HtodStoreConfiguration> {
    /** The namespace written, the version of this element's schema. */
    static final String NAMESPACE = HtodStoreConfigurationParser.NAMESPACE + "1.0";

    @Override
    public void serialize(ConfigurationWriter writer, HtodStoreConfiguration configuration) {
        writer.writeStartElement(Element.HTOD_STORE);
        writer.writeDefaultNamespace(NAMESPACE);
        configuration.attributes().write(writer);
        writeCommonStoreSubAttributes(writer, configuration);
        writeCommonStoreElements(writer, configuration);
        writer.writeEndElement();
    }
}
