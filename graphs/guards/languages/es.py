"""Hold the Spanish injection rules: every family at least twice, on folded text.

Folded Spanish has no accents ("instrucciones", "depuracion"); "¿" and "¡" stay. Switching
a "modo desarrollador" on weighs 0.7 (the turn is hardened), being told one is in it 1.0.
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["ES_RULES"]

_RULES = (
    r"(?:instrucciones|indicaciones|ordenes|reglas|normas|directrices|directivas|comandos"
    r"|pautas)"
)

ES_RULES: tuple[Rule, ...] = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignora|ignore|ignorar|ignorad|olvida|olvide|olvidar|descarta|descarte|omite|omita"
        rf"|pasa por alto|deja de lado|no hagas caso de)\s+(?:\w+\s+){{0,3}}?{_RULES}\b",
        "ignora ignore ignorar ignorad olvida olvide olvidar descarta descarte omite omita pasa"
        " deja hagas",
    ),
    make_rule(
        "instruction_override",
        1.0,
        rf"\b(?:tus|sus|las) (?:anteriores |antiguas |primeras )?{_RULES} (?:anteriores |previas"
        r" |iniciales |originales )?(?:ya no (?:valen|cuentan|aplican|sirven)|(?:quedan|estan)"
        r" (?:anuladas|canceladas|sin efecto))"
        r"|\btodo lo que te (?:dijeron|dieron|indicaron|escribieron) (?:\w+ ){0,3}ya no"
        r" (?:vale|cuenta|aplica|sirve)\b",
        "tus sus las todo",
    ),
    make_rule(
        "instruction_override",
        0.7,
        rf"\b(?:a partir de ahora|desde ahora|desde este momento),? solo (?:cuentan|valen|sigues"
        rf"|aplican) (?:mis|las mias|mis propias) ?{_RULES}?",
        "partir desde",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\b(?:responde|escribe|di|imprime|contesta) (?:solo|solamente|unicamente) (?:con )?"
        r"[\"'«“]|\btu (?:nueva|verdadera) tarea es\b|\b(?:comienza|empieza) tu respuesta con\b",
        "responde escribe di imprime contesta tu comienza empieza",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\bno (?:respondas|contestes) (?:a )?(?:mi|la|esta) pregunta\s*[:,;]"
        r"|\b(?:a partir de ahora|desde ahora|de ahora en adelante),? (?:termina|empieza|comienza"
        r"|acaba) (?:cada|todas las|tus) respuestas?\b"
        r"|\bolvida (?:mi|la) pregunta y (?:escribe|di|responde|imprime)\b",
        "respondas contestes partir desde adelante olvida",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"\b(?:asistente|ia)\s*:\s.{1,300}?\b(?:usuario|humano)\s*:\s"
        r"|\busuario\s*:\s.{1,300}?\b(?:asistente|ia)\s*:\s",
        "asistente ia usuario",
    ),
    make_rule(
        "fake_transcript",
        0.7,
        r"(?:^|[.!?\"'\]]\s*|\s)(?:asistente|ia|bot)\s*:\s*(?:claro|por supuesto|con gusto"
        r"|desde luego|vale|ok|aqui)\b|^\s*(?:sistema|mensaje del sistema)\s*:",
        "asistente ia bot sistema mensaje",
        dampened=False,
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:muestra|muestrame|mostrame|revela|revelame|repite|repiteme|dime|escribe)[\w-]*"
        r" (?:me )?(?:\w+ )?(?:(?:tu|tus) (?:\w+ )?(?:prompt|instrucciones|indicaciones)\b"
        r"(?! (?:de|del|para|sobre)\b)|(?:tu|tus|su|sus|el|los|las) (?:\w+ )?(?:prompt"
        r"|instrucciones|indicaciones) (?:del sistema|de sistema|iniciales|originales|ocultas)\b"
        r"|(?:el|tu) (?:mensaje|prompt) del sistema\b)"
        r"|\bque te (?:dijeron|indicaron|ordenaron)\b",
        "muestra muestrame mostrame revela revelame repite repiteme dime escribe dijeron indicaron"
        " ordenaron",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:copia|copiame|repite|cita|reproduce|transcribe)\w* (?:\w+ ){0,2}(?:palabra por"
        r" palabra|literalmente|textualmente|integramente)?\s?(?:todo )?(?:lo que|el texto que"
        r"|las lineas que) (?:aparece|aparecen|hay|esta|estaba|viene|venia|figura) (?:\w+ ){0,2}"
        r"(?:antes de|encima de|sobre) (?:mi|este|nuestro) (?:primer )?mensaje"
        r"|\bque te (?:escribieron|pusieron|dieron) (?:exactamente )?antes\b",
        "copia copiame repite cita reproduce transcribe que",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:estas|estas ahora) (?:\w+ )?(?:ahora )?en modo (?:desarrollador|administrador|admin"
        r"|dios|depuracion|sin restricciones)\b|\bsin (?:ninguna |ningun )?(?:restricciones|limites"
        r"|filtros|censura|reglas|normas)\b.{0,40}\b(?:responde|contesta|actua|habla)"
        r"|\b(?:mantente|permanece|quedate) en (?:el |tu )?personaje\b"
        r"|\bnunca (?:te niegues|rechaces|digas que no)\b",
        "estas sin mantente permanece quedate nunca",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:eres|seras|juega a ser|finge ser) (?:ahora )?(?:\w+,? )?(?:una |un )?(?:ia|bot"
        r"|asistente|modelo)\b(?: \w+)? (?:sin (?:ninguna |ningun )?(?:norma|regla|limite"
        r"|restriccion|filtro|censura|moral)|que (?:no tiene|ignora|responde a todo))"
        r"|\bno salgas (?:nunca )?del personaje\b|\bdame (?:siempre )?dos respuestas\b",
        "eres seras juega finge salgas dame",
    ),
    make_rule(
        "mode_switch",
        0.7,
        r"(?:^|[.!;:]\s*)(?:activa|active|entra|entre|cambia|pasa)\w*"
        r" (?:en |el |al |a )?(?:el )?modo (?:desarrollador|administrador|admin|dios|depuracion"
        r"|sin restricciones)\b(?! (?:en|del|de|para)\b)",
        "activa active entra entre cambia pasa",
    ),
    make_rule(
        "mode_switch",
        1.0,
        r"\bmodo (?:desarrollador|administrador|admin|dios|depuracion|sin restricciones) (?:esta )?"
        r"(?:ahora )?(?:activado|activo|habilitado|desbloqueado)\b",
        "modo",
    ),
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:aviso|mensaje|notificacion|alerta) (?:del|de) (?:sistema|administrador)\s*[:!]"
        r"|\b(?:modo|acceso|permisos) (?:de )?(?:admin|administrador|desarrollador) (?:\w+ )?"
        r"(?:concedido|activado|desbloqueado)s?\b|\bsoy (?:el|tu) (?:administrador|desarrollador"
        r"|dueno|propietario)\b",
        "aviso mensaje notificacion alerta modo acceso permisos soy",
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:aviso|mensaje|comunicado) (?:oficial|del equipo de seguridad|del propietario|del"
        r" desarrollador)\s*[:!]|\baqui (?:el |la )(?:administrador|admin|equipo de seguridad"
        r"|propietario|desarrollador|departamento de ti)\b"
        r"|\bha concedido a (?:esta|tu|su) cuenta (?:todos los )?permisos de (?:administrador"
        r"|admin)",
        "aviso mensaje comunicado aqui concedido",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\bnota (?:para|a) (?:la |las |cualquier |toda )?(?:ia|ias|inteligencia artificial"
        r"|asistentes?|modelos de lenguaje)\b|\bsi eres una ia\b",
        "nota si",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\ba (?:cualquier|toda|cada|la) (?:ia|inteligencia artificial|asistente|modelo)s?"
        r" (?:que|leyendo|resumiendo) (?:\w+ ){0,2}(?:lea|lee|resuma|resume|procese|procesa|esta"
        r"|este)\b"
        r"|\bsi (?:un|una) (?:asistente|ia|modelo|bot)\w* (?:automatico )?(?:lee|procesa|resume)"
        r" (?:este|esta) (?:documento|pagina|texto|mensaje|correo)",
        "a si",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The bare secret, with nothing after it: "... the password?" (a secret kept in a
        # prompt); "the password for the guest Wi-Fi" is a question about a document.
        r"\b(?:cual es|dime|dame|revela|revelame) (?:la|tu|su) (?:contrasena|clave|palabra secreta)"
        r"\s*(?:[?.!]|$)",
        "contrasena clave secreta",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The assistant's own secret: "... your password" (never "my password").
        r"\btu (?:contrasena|clave|codigo de acceso)\b",
        "contrasena clave acceso",
    ),
)
