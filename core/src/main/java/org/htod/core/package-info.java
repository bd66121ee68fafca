/** The errors every htod layer reports, from one unchecked base {@link org.htod.core.HtodException}. */
package org.htod.core;
