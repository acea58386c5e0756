/**
 * Geometry written in the tests, independently of the code under test: a Google encoded polyline
 * encoder and decoder, even-odd ray casting and the haversine distance.
 */

/** Great-circle distance in metres between two WGS84 points (haversine, Earth radius 6,371 km). */
export function haversine(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const rad = Math.PI / 180;
  const h =
    Math.sin(((b.latitude - a.latitude) * rad) / 2) ** 2 +
    Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(((b.longitude - a.longitude) * rad) / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.sqrt(h));
}

/** [lon, lat] positions -> a Google encoded polyline (latitude first, 5 decimals). */
export function encodePolyline(ring: number[][]): string {
  let out = '';
  let [lastLat, lastLon] = [0, 0];
  for (const [lon, lat] of ring) {
    const [y, x] = [Math.round(lat * 1e5), Math.round(lon * 1e5)];
    for (let delta of [y - lastLat, x - lastLon]) {
      delta = delta < 0 ? ~(delta << 1) : delta << 1;
      while (delta >= 0x20) {
        out += String.fromCharCode((0x20 | (delta & 0x1f)) + 63);
        delta >>= 5;
      }
      out += String.fromCharCode(delta + 63);
    }
    [lastLat, lastLon] = [y, x];
  }
  return out;
}

/** Google encoded polyline (latitude first, 5 decimals) -> [lon, lat] positions. */
export function decodePolyline(encoded: string): number[][] {
  const out: number[][] = [];
  let [index, lat, lon] = [0, 0, 0];
  while (index < encoded.length) {
    for (const axis of [0, 1]) {
      let [shift, result, byte] = [0, 0, 0];
      do {
        byte = encoded.charCodeAt(index++) - 63;
        result |= (byte & 0x1f) << shift;
        shift += 5;
      } while (byte >= 0x20);
      const delta = result & 1 ? ~(result >> 1) : result >> 1;
      if (axis === 0) lat += delta;
      else lon += delta;
    }
    out.push([lon / 1e5, lat / 1e5]);
  }
  return out;
}

/** Whether (lon, lat) lies inside the rings ([lon, lat] positions), by even-odd ray casting. */
export function inRings(rings: number[][][], lon: number, lat: number): boolean {
  let inside = false;
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i];
      const [xj, yj] = ring[j];
      if (yi > lat !== yj > lat && lon < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
    }
  }
  return inside;
}
