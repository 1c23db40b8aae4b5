use super::*;
use crate::svg::Series;

/// A PNG reader for the tests: checks the signature, every chunk's CRC and the IHDR,
/// inflates the IDAT data and undoes filter 0, giving (width, height, pixels).
pub fn decode(png: &[u8]) -> (u32, u32, Vec<Rgb>) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "signature");
    let mut at = 8;
    let (mut w, mut h) = (0u32, 0u32);
    let mut idat = Vec::new();
    let mut kinds = Vec::new();
    while at < png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(crc, crc32(&png[at + 4..at + 8 + len]), "CRC of a chunk");
        kinds.push(String::from_utf8_lossy(kind).to_string());
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap());
                h = u32::from_be_bytes(data[4..8].try_into().unwrap());
                assert_eq!(&data[8..13], &[8, 2, 0, 0, 0], "8-bit RGB");
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    assert_eq!(kinds.first().map(String::as_str), Some("IHDR"));
    assert_eq!(kinds.last().map(String::as_str), Some("IEND"));
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&idat).expect("zlib data");
    let stride = 1 + 3 * w as usize;
    assert_eq!(raw.len(), stride * h as usize);
    let mut px = Vec::new();
    for row in raw.chunks(stride) {
        assert_eq!(row[0], 0, "filter none");
        px.extend(row[1..].chunks(3).map(|p| [p[0], p[1], p[2]]));
    }
    (w, h, px)
}

#[test]
fn crc_matches_the_standard_check_value() {
    // The CRC-32 check value of the ASCII digits "123456789" is 0xCBF43926.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

fn dark_in_band(px: &[Rgb], w: u32, y0: u32, y1: u32) -> usize {
    (y0..y1)
        .flat_map(|y| (0..w).map(move |x| (y * w + x) as usize))
        .filter(|&i| px[i].iter().all(|&v| v < 128))
        .count()
}

#[test]
fn a_chart_decodes_at_its_size_with_colours_and_text() {
    let c = Chart {
        title: "TTFT over time".into(),
        x_label: "time (s)".into(),
        y_label: "ms".into(),
        series: vec![
            Series::new("a", vec![(0.0, 1.0), (1.0, 2.0), (2.0, 1.5)], Style::Line),
            Series::new("b", vec![(0.5, 3.0), (1.5, 0.5)], Style::Points),
            Series::new("c", vec![(0.0, 0.0), (1.0, 1.0)], Style::Step),
        ],
    };
    let (w, h, px) = decode(&render_png(&c));
    assert_eq!((w, h), (1440, 800));
    let mut colours: Vec<Rgb> = px.clone();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 20, "{} colours", colours.len());
    // Each series' colour is drawn exactly somewhere (line cores and legend swatches).
    for (k, c) in COLORS.iter().take(3).enumerate() {
        assert!(px.contains(&hex(c)), "series {k} colour");
    }
    // The title band (above the plot, y < TOP) holds dark text pixels.
    assert!(dark_in_band(&px, w, 0, (29.0 * SCALE) as u32) > 200);
}

#[test]
fn text_pixels_come_from_the_text() {
    // With no series and no labels, the title band is blank without a title and inked
    // with one: the font is embedded and rasterized.
    // Above y = 29: the title's descenders end near 26, the top tick label starts near 31.
    let band = (29.0 * SCALE) as u32;
    let (w, _, blank) = decode(&render_png(&Chart::default()));
    assert_eq!(dark_in_band(&blank, w, 0, band), 0);
    let titled = Chart {
        title: "Inter-token latency".into(),
        ..Chart::default()
    };
    let (_, _, px) = decode(&render_png(&titled));
    let ink = dark_in_band(&px, w, 0, band);
    assert!(ink > 300, "{ink} dark pixels");
    // Centred: the inked columns straddle the middle of the image.
    let cols: Vec<u32> = (0..band)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| px[(y * w + x) as usize].iter().all(|&v| v < 128))
        .map(|(x, _)| x)
        .collect();
    let (lo, hi) = (*cols.iter().min().unwrap(), *cols.iter().max().unwrap());
    assert!(lo < w / 2 && hi > w / 2);
    assert!(((lo + hi) as i64 - w as i64).abs() < 20, "{lo}..{hi}");
}

#[test]
fn a_vertical_label_is_drawn_rotated() {
    // The y label reads bottom to top: its ink is taller than wide.
    let c = Chart {
        y_label: "latency milliseconds".into(),
        ..Chart::default()
    };
    let (w, h, px) = decode(&render_png(&c));
    let strip = (30.0 * SCALE) as u32; // left of the tick labels
    let ink: Vec<(u32, u32)> = (0..h)
        .flat_map(|y| (0..strip).map(move |x| (x, y)))
        .filter(|&(x, y)| px[(y * w + x) as usize].iter().all(|&v| v < 128))
        .collect();
    assert!(ink.len() > 200);
    let xs = ink.iter().map(|p| p.0);
    let ys = ink.iter().map(|p| p.1);
    let wide = xs.clone().max().unwrap() - xs.min().unwrap();
    let tall = ys.clone().max().unwrap() - ys.min().unwrap();
    assert!(tall > 4 * wide, "{wide}×{tall}");
}
