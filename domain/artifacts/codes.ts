/**
 * Code lists the artifact generators need: UAE emirate codes, Malaysian state codes, ISO 3166-1
 * alpha-2 to alpha-3 (MyInvois writes alpha-3), default Peppol endpoint schemes per country and the
 * default VATEX exemption codes of EN 16931. Pure data.
 */

/** docs/api/unify.md: the emirate codes. */
export const EMIRATE_CODES = ['AUH', 'DXB', 'SHJ', 'UAQ', 'FUJ', 'AJM', 'RAK'] as const;

const EMIRATE_BY_NAME: Record<string, string> = {
  'abu dhabi': 'AUH',
  dubai: 'DXB',
  sharjah: 'SHJ',
  'umm al quwain': 'UAQ',
  'umm al-quwain': 'UAQ',
  fujairah: 'FUJ',
  ajman: 'AJM',
  'ras al khaimah': 'RAK',
  'ras al-khaimah': 'RAK',
};

/** The emirate code for a UAE subdivision given as a code or an English name; other values pass through. */
export function emirateCode(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  const upper = trimmed.toUpperCase();
  if ((EMIRATE_CODES as readonly string[]).includes(upper)) return upper;
  return EMIRATE_BY_NAME[trimmed.toLowerCase()] ?? trimmed;
}

const MY_STATES: Record<string, string> = {
  johor: '01',
  kedah: '02',
  kelantan: '03',
  melaka: '04',
  malacca: '04',
  'negeri sembilan': '05',
  pahang: '06',
  'pulau pinang': '07',
  penang: '07',
  perak: '08',
  perlis: '09',
  selangor: '10',
  terengganu: '11',
  sabah: '12',
  sarawak: '13',
  'kuala lumpur': '14',
  'wilayah persekutuan kuala lumpur': '14',
  labuan: '15',
  'wilayah persekutuan labuan': '15',
  putrajaya: '16',
  'wilayah persekutuan putrajaya': '16',
  'not applicable': '17',
};

/** MyInvois state code (01..17) for a state given as a code or a name; '17' (not applicable) when unknown. */
export function malaysianStateCode(value: string | undefined): string {
  if (!value) return '17';
  const trimmed = value.trim();
  if (/^\d{1,2}$/.test(trimmed)) return trimmed.padStart(2, '0');
  return MY_STATES[trimmed.toLowerCase()] ?? '17';
}

const ALPHA3 =
  'AD:AND AE:ARE AF:AFG AG:ATG AI:AIA AL:ALB AM:ARM AO:AGO AQ:ATA AR:ARG AS:ASM AT:AUT AU:AUS AW:ABW ' +
  'AX:ALA AZ:AZE BA:BIH BB:BRB BD:BGD BE:BEL BF:BFA BG:BGR BH:BHR BI:BDI BJ:BEN BL:BLM BM:BMU BN:BRN ' +
  'BO:BOL BQ:BES BR:BRA BS:BHS BT:BTN BV:BVT BW:BWA BY:BLR BZ:BLZ CA:CAN CC:CCK CD:COD CF:CAF CG:COG ' +
  'CH:CHE CI:CIV CK:COK CL:CHL CM:CMR CN:CHN CO:COL CR:CRI CU:CUB CV:CPV CW:CUW CX:CXR CY:CYP CZ:CZE ' +
  'DE:DEU DJ:DJI DK:DNK DM:DMA DO:DOM DZ:DZA EC:ECU EE:EST EG:EGY EH:ESH ER:ERI ES:ESP ET:ETH FI:FIN ' +
  'FJ:FJI FK:FLK FM:FSM FO:FRO FR:FRA GA:GAB GB:GBR GD:GRD GE:GEO GF:GUF GG:GGY GH:GHA GI:GIB GL:GRL ' +
  'GM:GMB GN:GIN GP:GLP GQ:GNQ GR:GRC GS:SGS GT:GTM GU:GUM GW:GNB GY:GUY HK:HKG HM:HMD HN:HND HR:HRV ' +
  'HT:HTI HU:HUN ID:IDN IE:IRL IL:ISR IM:IMN IN:IND IO:IOT IQ:IRQ IR:IRN IS:ISL IT:ITA JE:JEY JM:JAM ' +
  'JO:JOR JP:JPN KE:KEN KG:KGZ KH:KHM KI:KIR KM:COM KN:KNA KP:PRK KR:KOR KW:KWT KY:CYM KZ:KAZ LA:LAO ' +
  'LB:LBN LC:LCA LI:LIE LK:LKA LR:LBR LS:LSO LT:LTU LU:LUX LV:LVA LY:LBY MA:MAR MC:MCO MD:MDA ME:MNE ' +
  'MF:MAF MG:MDG MH:MHL MK:MKD ML:MLI MM:MMR MN:MNG MO:MAC MP:MNP MQ:MTQ MR:MRT MS:MSR MT:MLT MU:MUS ' +
  'MV:MDV MW:MWI MX:MEX MY:MYS MZ:MOZ NA:NAM NC:NCL NE:NER NF:NFK NG:NGA NI:NIC NL:NLD NO:NOR NP:NPL ' +
  'NR:NRU NU:NIU NZ:NZL OM:OMN PA:PAN PE:PER PF:PYF PG:PNG PH:PHL PK:PAK PL:POL PM:SPM PN:PCN PR:PRI ' +
  'PS:PSE PT:PRT PW:PLW PY:PRY QA:QAT RE:REU RO:ROU RS:SRB RU:RUS RW:RWA SA:SAU SB:SLB SC:SYC SD:SDN ' +
  'SE:SWE SG:SGP SH:SHN SI:SVN SJ:SJM SK:SVK SL:SLE SM:SMR SN:SEN SO:SOM SR:SUR SS:SSD ST:STP SV:SLV ' +
  'SX:SXM SY:SYR SZ:SWZ TC:TCA TD:TCD TF:ATF TG:TGO TH:THA TJ:TJK TK:TKL TL:TLS TM:TKM TN:TUN TO:TON ' +
  'TR:TUR TT:TTO TV:TUV TW:TWN TZ:TZA UA:UKR UG:UGA UM:UMI US:USA UY:URY UZ:UZB VA:VAT VC:VCT VE:VEN ' +
  'VG:VGB VI:VIR VN:VNM VU:VUT WF:WLF WS:WSM YE:YEM YT:MYT ZA:ZAF ZM:ZMB ZW:ZWE';

const ALPHA2_TO_ALPHA3 = new Map(ALPHA3.split(' ').map((pair) => pair.split(':') as [string, string]));

/** ISO 3166-1 alpha-3 for an alpha-2 code; a value that already has three letters passes through. */
export function countryAlpha3(alpha2: string | undefined): string | undefined {
  if (!alpha2) return undefined;
  const upper = alpha2.trim().toUpperCase();
  if (upper.length === 3) return upper;
  return ALPHA2_TO_ALPHA3.get(upper) ?? upper;
}

/**
 * Default Peppol electronic address scheme (EAS, ISO 6523 ICD) per participant country when the
 * payload names none: UAE TIN 0235, Belgian enterprise number 0208, German VAT 9930, and the VAT
 * schemes of a few neighbours. GLN (0088) otherwise.
 */
const DEFAULT_EAS: Record<string, string> = {
  AE: '0235',
  BE: '0208',
  DE: '9930',
  NL: '9944',
  FR: '9957',
  LU: '9938',
  AT: '9915',
  IT: '9906',
  ES: '9920',
};

export function defaultEndpointScheme(country: string | undefined): string {
  return DEFAULT_EAS[(country ?? '').toUpperCase()] ?? '0088';
}

/** EN 16931 / Peppol BIS: the VATEX code written when a category needs a reason and the line gives none. */
export const DEFAULT_VATEX: Record<string, { code: string; reason: string }> = {
  AE: { code: 'VATEX-EU-AE', reason: 'Reverse charge' },
  K: { code: 'VATEX-EU-IC', reason: 'Intra-Community supply' },
  G: { code: 'VATEX-EU-G', reason: 'Export outside the EU' },
  O: { code: 'VATEX-EU-O', reason: 'Not subject to VAT' },
};

/**
 * The Peppol Electronic Address Scheme (EAS) code list of Peppol BIS Billing 3.0 (release
 * 2026.5, rule PEPPOL-EN16931-CL008): the schemes an endpoint id may carry.
 */
export const PEPPOL_EAS_CODES: ReadonlySet<string> = new Set(
  (
    '0002 0007 0009 0060 0088 0096 0097 0106 0130 0135 0142 0151 0183 0184 0188 0190 0191 0192 0195 0196 0198 0199 0200 0201 0204 ' +
    '0208 0209 0210 0211 0216 0218 0221 0225 0230 0235 0240 0242 0244 0245 0246 0248 9910 9913 9914 9915 9918 9919 9920 9922 9923 ' +
    '9924 9925 9926 9927 9928 9929 9930 9931 9932 9933 9934 9935 9936 9937 9938 9939 9940 9941 9942 9943 9944 9945 9946 9947 9948 ' +
    '9949 9950 9951 9952 9953 9957 9959'
  ).split(' '),
);

/** A Belgian enterprise number (scheme 0208): 10 digits whose last two are 97 - (first eight mod 97) (PEPPOL-COMMON-R043). */
export function belgianEnterpriseNumberOk(value: string): boolean {
  if (!/^\d{10}$/.test(value)) return false;
  return 97 - (Number(value.slice(0, 8)) % 97) === Number(value.slice(8));
}
