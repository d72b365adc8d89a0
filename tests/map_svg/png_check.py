"""Checks a screenshot of the SVG map is a picture, with python3 alone (zlib, no imaging library):
png_check.py FILE WIDTH HEIGHT. Decodes 8-bit RGB/RGBA PNG (every filter type), then requires the
size, at least 12 distinct colours, 5-95% of pixels not white, and at least 4 of the map's fill
colours (src/map_svg.cpp's kInstanceFill and kPipeFill) present."""
import struct
import sys
import zlib

PALETTE = ["8ecae6", "b5e48c", "ffadad", "cdb4db", "ffe066", "caffbf", "ffd6a5", "bde0fe",  # instances
           "f4a261", "76c7c0", "9fa8da", "f28eb2", "c5c56a", "d4a373"]  # pipes


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("FAIL: not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit("FAIL: unexpected PNG format (depth %d, colour type %d, interlace %d)" % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    pixels = []
    for line in rows:
        pixels.extend(line[i:i + 3] for i in range(0, stride, bpp))
    return w, h, pixels


def main():
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    w, h, pixels = decode(path)
    if (w, h) != (want_w, want_h):
        sys.exit("FAIL: screenshot is %dx%d, expected %dx%d" % (w, h, want_w, want_h))
    colours = set(pixels)
    white = sum(1 for p in pixels if p == b"\xff\xff\xff")
    ink = 1 - white / len(pixels)
    fills = [c for c in PALETTE if bytes.fromhex(c) in colours]
    print("screenshot %dx%d: %d distinct colours, %.1f%% not white, map fills present: %s"
          % (w, h, len(colours), 100 * ink, " ".join("#" + c for c in fills)))
    if len(colours) < 12:
        sys.exit("FAIL: too few colours: blank or not drawn")
    if not 0.05 <= ink <= 0.95:
        sys.exit("FAIL: the screenshot is nearly blank or nearly solid")
    if len(fills) < 4:
        sys.exit("FAIL: fewer than 4 of the map's fill colours appear: the SVG's shapes were not drawn")


main()
